package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/devicectl/devicectl/agent/hub"
)

// Defaults of Options.
const (
	DefaultName = "devicectl"
	DefaultTTL  = 15 * time.Second
	// MinTTL is the shortest TTL: the holds are renewed every third of it, and NATS keeps its
	// limit markers at least a second.
	MinTTL = 3 * time.Second
	// MaxRemoteCalls bounds the calls other nodes run on this node's devices at once; one more
	// is answered -32002, like a device that is busy.
	MaxRemoteCalls = 4096
)

// Options configure New. New copies them.
type Options struct {
	// URL is the NATS server, nats://HOST:4222 (tls:// for TLS; several separated by commas).
	// It may carry user:password. Required.
	URL string
	// Token authenticates to NATS, when it asks for one (agent.cluster.token_file).
	Token string
	// Name is the cluster's: the nodes of one cluster share it, and it prefixes the subjects and
	// buckets, so that several clusters can share a NATS server. "" means DefaultName.
	Name string
	// Node is this node's name, unique in the cluster. "" means DefaultNode().
	Node string
	// TTL is how long a hold outlives its node's last renewal; 0 means DefaultTTL.
	TTL time.Duration
	// Logger receives joins, take-overs and NATS trouble; nil discards.
	Logger *slog.Logger
}

// DefaultNode is a node name of the machine's host name and a random suffix: unique, and a node
// restarted on the same machine is a new node, whose predecessor's holds are free at once.
func DefaultNode() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, host)
	if len(host) > 48 {
		host = host[:48]
	}
	var b [3]byte
	rand.Read(b[:])
	if host == "" {
		host = "node"
	}
	return host + "-" + hex.EncodeToString(b[:])
}

// Cluster is this node's part of a cluster: a hub.Cluster. Make it with New, give it to the hub
// (hub.Options.Cluster), Start it once the hub is built, and Close it after the hub.
type Cluster struct {
	o      Options
	log    *slog.Logger
	nc     *nats.Conn
	kv     jetstream.KeyValue // NAME_devices: MAC -> holding
	tools  jetstream.KeyValue // NAME_tools: SHA-256 -> params.tools
	prefix string             // NAME.

	hub hub.Node // set by Attach

	ctx    context.Context // ends at Close: the watch, the renewals, the calls run for others
	cancel context.CancelFunc

	mu        sync.Mutex
	held      map[string]*hold     // the MACs this node's lines hold, by MAC
	view      map[string]viewEntry // the MACs other nodes hold, as last applied to the hub
	toolsets  map[string]*toolsRef // declarations by SHA-256, for held and viewed MACs
	sendq     map[string][]sendJob // messages waiting for a device, by MAC (its writer runs)
	started   bool
	closing   bool // set by Close: nothing more is started for other nodes
	subs      []*nats.Subscription
	calls     chan struct{} // a slot per call run for another node
	wg        sync.WaitGroup
	rewatch   chan struct{} // the connection is back: the watch starts again
	ready     chan struct{} // closed when the watch has applied the bucket as it was
	readyOnce sync.Once
	stopOnce  sync.Once
}

// hold is a MAC this node holds.
type hold struct {
	rev   uint64    // the bucket's revision of the last write
	since time.Time // the registration's: Release names it
	value []byte    // the holding, as written
	tools string    // SHA-256 of its declarations
}

// viewEntry is a MAC another node holds, as the hub was told.
type viewEntry struct {
	rev   uint64
	node  string
	tools string
}

// toolsRef is one tool declaration set and how many holds and viewed MACs use it.
type toolsRef struct {
	raw  []byte // nil until fetched, for another node's
	refs int
}

// New connects to NATS and makes the buckets if they are missing. The cluster does nothing more
// until Start.
func New(ctx context.Context, o *Options) (*Cluster, error) {
	if o == nil || o.URL == "" {
		return nil, errors.New("cluster: no NATS URL")
	}
	c := &Cluster{o: *o, held: map[string]*hold{}, view: map[string]viewEntry{}, toolsets: map[string]*toolsRef{},
		sendq: map[string][]sendJob{}, calls: make(chan struct{}, MaxRemoteCalls), ready: make(chan struct{}), rewatch: make(chan struct{}, 1)}
	if c.o.Name == "" {
		c.o.Name = DefaultName
	}
	if c.o.Node == "" {
		c.o.Node = DefaultNode()
	}
	if c.o.TTL == 0 {
		c.o.TTL = DefaultTTL
	}
	for _, s := range []string{c.o.Name, c.o.Node} {
		if strings.ContainsAny(s, ". *>\t\r\n") {
			return nil, fmt.Errorf("cluster: %q cannot name a NATS subject", s)
		}
	}
	if c.o.TTL < MinTTL {
		return nil, fmt.Errorf("cluster: TTL %s is shorter than %s", c.o.TTL, MinTTL)
	}
	c.log = c.o.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("component", "cluster", "node", c.o.Node)
	c.prefix = c.o.Name + "."
	c.ctx, c.cancel = context.WithCancel(context.Background())

	opts := []nats.Option{
		nats.Name("devicectl serve " + c.o.Node),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.Timeout(5 * time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				c.log.Warn("lost NATS: devices on other nodes cannot be reached, and registrations are refused until it is back", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.log.Info("NATS reconnected", "server", nc.ConnectedUrlRedacted())
			// A restarted server lost the watch's consumer, which the client would notice only
			// after missing its heartbeats for seconds: the watch starts again now.
			select {
			case c.rewatch <- struct{}{}:
			default:
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.log.Warn("NATS", "err", err)
		}),
	}
	if c.o.Token != "" {
		opts = append(opts, nats.Token(c.o.Token))
	}
	nc, err := nats.Connect(c.o.URL, opts...)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("cluster: connecting to NATS: %w", err)
	}
	c.nc = nc
	if err := c.buckets(ctx); err != nil {
		c.cancel()
		nc.Close()
		return nil, err
	}
	return c, nil
}

// buckets makes or updates the two buckets, so that the nodes agree on their TTL (the last node
// started sets it).
func (c *Cluster) buckets(ctx context.Context) error {
	js, err := jetstream.New(c.nc)
	if err != nil {
		return fmt.Errorf("cluster: JetStream: %w", err)
	}
	c.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      c.o.Name + "_devices",
		Description: "devicectl: which serve node holds which device (by MAC)",
		TTL:         c.o.TTL,
		// Watchers learn of the holds that expire: how every node sees a dead node's devices go.
		LimitMarkerTTL: c.o.TTL,
	})
	if err != nil {
		return fmt.Errorf("cluster: the bucket %s_devices (is JetStream enabled on the NATS server?): %w", c.o.Name, err)
	}
	c.tools, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      c.o.Name + "_tools",
		Description: "devicectl: the tool declarations of the devices in " + c.o.Name + "_devices, by SHA-256",
		TTL:         c.o.TTL,
	})
	if err != nil {
		return fmt.Errorf("cluster: the bucket %s_tools: %w", c.o.Name, err)
	}
	return nil
}

var _ hub.Cluster = (*Cluster)(nil)

// Attach implements hub.Cluster.
func (c *Cluster) Attach(n hub.Node) { c.hub = n }

// Node implements hub.Cluster.
func (c *Cluster) Node() string { return c.o.Node }

// Name is the cluster's name.
func (c *Cluster) Name() string { return c.o.Name }

// startTimeout bounds how long Start waits for the bucket's holds to be read.
const startTimeout = 30 * time.Second

// Start answers the other nodes, watches the holds and renews this node's, and returns once the
// hub knows of the devices the other nodes hold. The hub must be attached.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.hub == nil || c.started {
		c.mu.Unlock()
		return errors.New("cluster: Start needs a hub attached, and runs once")
	}
	c.started = true
	c.mu.Unlock()
	node := c.prefix + "node." + c.o.Node + "."
	for _, s := range []struct {
		subject string
		handle  nats.MsgHandler
	}{
		{node + "claim", c.handleClaim},
		{node + "call", c.handleCall},
		{node + "send", c.handleSend},
		{c.prefix + "events.*", c.handleEvent},
	} {
		sub, err := c.nc.Subscribe(s.subject, s.handle)
		if err != nil {
			return fmt.Errorf("cluster: subscribing to %s: %w", s.subject, err)
		}
		sub.SetPendingLimits(-1, 64<<20) // a burst of messages waits; only their bytes are bounded
		c.subs = append(c.subs, sub)
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	// The subscriptions are in place on the server before any device of this node is held.
	if err := c.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("cluster: NATS: %w", err)
	}
	c.wg.Go(c.watch)
	c.wg.Go(c.renew)
	select {
	case <-c.ready:
		c.log.Info("joined the cluster", "cluster", c.o.Name, "nats", c.nc.ConnectedUrlRedacted(), "ttl", c.o.TTL)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cluster: the bucket %s_devices was not read: %w", c.o.Name, ctx.Err())
	}
}

// Close stops answering the other nodes and waits for what runs for them, then closes the
// connection. Close the hub first: its lines' ends release their holds through the cluster.
func (c *Cluster) Close() error {
	c.stopOnce.Do(func() {
		for _, s := range c.subs {
			s.Unsubscribe()
		}
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.cancel()
		c.wg.Wait()
		c.nc.Flush()
		c.nc.Close()
	})
	return nil
}
