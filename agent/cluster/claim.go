package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/devicectl/devicectl/agent/hub"
)

// holding is a hold's value in NAME_devices.
type holding struct {
	Node   string    `json:"node"`
	Since  time.Time `json:"since"`
	Remote string    `json:"remote"`
	Tools  string    `json:"tools"` // SHA-256 of the declarations, their key in NAME_tools
}

// claimRequest asks the node that holds a MAC to yield it (NAME.node.NODE.claim).
type claimRequest struct {
	MAC      string `json:"mac"`
	ClientID string `json:"client_id,omitempty"`
	Remote   string `json:"remote"`
	Node     string `json:"node"`
}

// claimReply is the holder's answer: Refused holds the details of a refusal; empty, the MAC is
// free to take.
type claimReply struct {
	Refused string `json:"refused,omitempty"`
}

// maxClaimRounds bounds the compare-and-set rounds of one claim: each lost round means another
// write came between the read and the write, which a few rounds outlast.
const maxClaimRounds = 8

// askTimeout bounds the question to the node that holds a MAC.
const askTimeout = 2 * time.Second

func toolsKey(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Claim implements hub.Cluster.
func (c *Cluster) Claim(ctx context.Context, cl hub.Claim) error {
	if !c.nc.IsConnected() {
		return errNoNATS
	}
	key := toolsKey(cl.Tools)
	value, err := json.Marshal(holding{Node: c.o.Node, Since: cl.Since, Remote: cl.RemoteAddr, Tools: key})
	if err != nil {
		return err
	}
	// The declarations first: a node that sees the hold finds them.
	if err := c.retainTools(ctx, key, cl.Tools); err != nil {
		return err
	}
	rev, err := c.claim(ctx, cl, value)
	if err != nil {
		c.mu.Lock()
		c.unrefTools(key)
		c.mu.Unlock()
		return err
	}
	c.mu.Lock()
	if old := c.held[cl.MAC]; old != nil {
		c.unrefTools(old.tools)
	}
	c.held[cl.MAC] = &hold{rev: rev, since: cl.Since, value: value, tools: key}
	if v, ok := c.view[cl.MAC]; ok { // another node's until now: the hub knows it is this one's
		delete(c.view, cl.MAC)
		c.unrefTools(v.tools)
	}
	c.mu.Unlock()
	return nil
}

// claim writes the hold, asking the node that holds the MAC first; it returns the revision.
func (c *Cluster) claim(ctx context.Context, cl hub.Claim, value []byte) (uint64, error) {
	c.mu.Lock()
	var rev uint64
	if h := c.held[cl.MAC]; h != nil {
		rev = h.rev // this node's already (the device's tools change, or it is back on a new line)
	}
	c.mu.Unlock()
	for range maxClaimRounds {
		if rev == 0 {
			e, err := c.kv.Get(ctx, cl.MAC)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				n, err := c.kv.Create(ctx, cl.MAC, value)
				if errors.Is(err, jetstream.ErrKeyExists) {
					continue // another claim came first: look again
				}
				return n, err
			case err != nil:
				return 0, fmt.Errorf("cluster: reading who holds %s: %w", cl.MAC, err)
			}
			var cur holding
			if json.Unmarshal(e.Value(), &cur) == nil && cur.Node != c.o.Node && cur.Node != "" {
				if err := c.ask(ctx, cur.Node, cl); err != nil {
					return 0, err
				}
			}
			rev = e.Revision()
		}
		n, err := c.kv.Update(ctx, cl.MAC, value, rev)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("cluster: writing the hold of %s: %w", cl.MAC, err)
		}
		rev = 0
	}
	return 0, fmt.Errorf("cluster: %s changed hands %d times during one claim", cl.MAC, maxClaimRounds)
}

// ask asks node to yield mac: nil when it does, or is gone; a *hub.ClaimError when it refuses.
func (c *Cluster) ask(ctx context.Context, node string, cl hub.Claim) error {
	data, err := json.Marshal(claimRequest{MAC: cl.MAC, ClientID: cl.ClientID, Remote: cl.RemoteAddr, Node: c.o.Node})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	m, err := c.nc.RequestWithContext(ctx, c.prefix+"node."+node+".claim", data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		c.log.Info("taking over a device whose node is gone", "mac", cl.MAC, "gone", node)
		return nil
	case err != nil:
		return fmt.Errorf("cluster: node %s, which holds %s, did not answer: %w", node, cl.MAC, err)
	}
	var rep claimReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return fmt.Errorf("cluster: node %s answered a claim with %q: %w", node, m.Data, err)
	}
	if rep.Refused != "" {
		return &hub.ClaimError{Details: rep.Refused}
	}
	return nil
}

// handleClaim answers another node's claim by the hub's rules. A MAC given up is no longer held
// here: the claimant writes its hold over this node's.
func (c *Cluster) handleClaim(m *nats.Msg) {
	var req claimRequest
	var rep claimReply
	if err := json.Unmarshal(m.Data, &req); err != nil {
		rep.Refused = "a malformed claim: " + err.Error()
	} else {
		c.mu.Lock()
		before := c.held[req.MAC]
		c.mu.Unlock()
		if err := c.hub.Yield(hub.Claim{MAC: req.MAC, ClientID: req.ClientID, RemoteAddr: req.Remote, Node: req.Node}); err != nil {
			rep.Refused = err.Error()
		} else {
			c.mu.Lock()
			// Only the hold that was given up: a registration here since then holds anew.
			if h := c.held[req.MAC]; h != nil && h == before {
				delete(c.held, req.MAC)
				c.unrefTools(h.tools)
			}
			c.mu.Unlock()
		}
	}
	data, _ := json.Marshal(rep)
	if err := m.Respond(data); err != nil {
		c.log.Debug("answering a claim", "mac", req.MAC, "err", err)
	}
}

// releaseTimeout bounds the deletion of a hold.
const releaseTimeout = 5 * time.Second

// Release implements hub.Cluster.
func (c *Cluster) Release(mac string, since time.Time) {
	if h := c.unhold(mac, since); h != nil {
		c.deleteHold(mac, h.rev)
	}
}

// unhold drops the hold of mac taken for the registration of since and returns it; nil when
// there is none (released already, or taken anew by a newer registration).
func (c *Cluster) unhold(mac string, since time.Time) *hold {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.held[mac]
	if h == nil || !h.since.Equal(since) {
		return nil
	}
	delete(c.held, mac)
	c.unrefTools(h.tools)
	return h
}

// deleteHold deletes the hold of mac written at rev; a newer one stays.
func (c *Cluster) deleteHold(mac string, rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	err := c.kv.Delete(ctx, mac, jetstream.LastRevision(rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		// It expires within the TTL; meanwhile a claim asks this node, which gives it up.
		c.log.Debug("deleting a hold", "mac", mac, "err", err)
	}
}

// retainTools counts one more use of the declarations under key, writing them to NAME_tools on
// their first use here.
func (c *Cluster) retainTools(ctx context.Context, key string, raw []byte) error {
	c.mu.Lock()
	t := c.toolsets[key]
	if t != nil && t.raw != nil {
		t.refs++
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if _, err := c.tools.Put(ctx, key, raw); err != nil {
		return fmt.Errorf("cluster: writing tool declarations: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.toolsets[key]; t != nil {
		t.refs++
		t.raw = raw
		return nil
	}
	c.toolsets[key] = &toolsRef{raw: raw, refs: 1}
	return nil
}

// unrefTools counts one use less; called with c.mu held.
func (c *Cluster) unrefTools(key string) {
	t := c.toolsets[key]
	if t == nil {
		return
	}
	if t.refs--; t.refs <= 0 {
		delete(c.toolsets, key)
	}
}

// renewers is how many holds are rewritten at once.
const renewers = 32

// renew rewrites this node's holds, and their declarations, every third of the TTL until Close.
func (c *Cluster) renew() {
	t := time.NewTicker(c.o.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		c.renewAll()
	}
}

func (c *Cluster) renewAll() {
	type job struct {
		mac string
		h   hold
	}
	c.mu.Lock()
	jobs := make([]job, 0, len(c.held))
	decls := map[string][]byte{}
	for mac, h := range c.held {
		jobs = append(jobs, job{mac, *h})
		if t := c.toolsets[h.tools]; t != nil && t.raw != nil {
			decls[h.tools] = t.raw
		}
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, c.o.TTL/3)
	defer cancel()
	for key, raw := range decls {
		if _, err := c.tools.Put(ctx, key, raw); err != nil {
			c.log.Warn("renewing tool declarations", "err", err)
		}
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, renewers)
	for _, j := range jobs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			c.renewOne(ctx, j.mac, j.h)
		})
	}
	wg.Wait()
}

// renewOne rewrites one hold. A hold that changed meanwhile expired (NATS was out of reach for
// longer than the TTL) and is written again if nobody took it, or was taken by another node,
// whose line serves the device now: this node's is closed.
func (c *Cluster) renewOne(ctx context.Context, mac string, h hold) {
	rev, err := c.kv.Update(ctx, mac, h.value, h.rev)
	if err == nil {
		c.renewed(mac, h.since, rev)
		return
	}
	if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		if c.ctx.Err() == nil {
			c.log.Warn("renewing a hold", "mac", mac, "err", err)
		}
		return
	}
	if !c.holds(mac, h.since) {
		return // released since the round began: its line's end deleted it
	}
	e, err := c.kv.Get(ctx, mac)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err := c.kv.Create(ctx, mac, h.value)
		if err == nil {
			c.log.Info("a hold had expired; it is written again", "mac", mac)
			c.renewed(mac, h.since, rev)
		}
		return // taken meanwhile: the next round finds by whom
	case err != nil:
		return
	}
	var cur holding
	if json.Unmarshal(e.Value(), &cur) == nil && cur.Node == c.o.Node && cur.Since.Equal(h.since) {
		c.renewed(mac, h.since, e.Revision()) // the write went through, its answer did not
		return
	}
	c.lose(mac, h.since, cur.Node)
}

// holds reports whether this node still holds mac for the registration of since.
func (c *Cluster) holds(mac string, since time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.held[mac]
	return h != nil && h.since.Equal(since)
}

// renewed records a hold's new revision; a hold released meanwhile is deleted after all.
func (c *Cluster) renewed(mac string, since time.Time, rev uint64) {
	c.mu.Lock()
	h := c.held[mac]
	if h != nil && h.since.Equal(since) {
		h.rev = rev
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if h == nil {
		c.deleteHold(mac, rev)
	}
}

// lose drops a hold another node wrote over, and closes this node's line for it.
func (c *Cluster) lose(mac string, since time.Time, node string) {
	if c.unhold(mac, since) != nil {
		c.hub.Lost(mac, fmt.Errorf("%w: node %s holds it now", hub.ErrMoved, node))
	}
}
