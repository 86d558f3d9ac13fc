package a2a

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/limiter"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/store"
	authbearer "github.com/devicectl/devicectl/internal/bearer"
	"github.com/devicectl/devicectl/tools"
)

// Runner is the part of the agent the front door drives. *agent.Agent satisfies it.
//
// A Runner that also has MaxTurns() int, as *agent.Agent does, has the A2A executions bounded
// at twice that number too, by a2a-go's limiter: a message past it is refused before a2a-go sets
// anything up for it. Twice, because a2a-go lets go of an execution only after its caller has
// the answer: at the same number, a caller that sends again at once could be refused for the
// turn it has just finished. The Runner's own limit is the exact one.
type Runner interface {
	// Turn runs one turn; it always ends with one EventFinal or EventError. A turn that starts
	// with EventStarted is answered at once; one that does not, when its first event comes.
	Turn(ctx context.Context, r agent.Request) iter.Seq[agent.Event]
	// Tools lists the tools a turn on the device mac may use ("" = the only device, or local only).
	Tools(mac string) []tools.Declaration
}

// Cluster is what the handler asks of the cluster of serve nodes that share its database
// (agent/cluster's *Cluster): its tasks are kept under its node's name, and the tasks a node
// that is gone left unfinished are marked failed.
type Cluster interface {
	// Node is this node's name, unique in the cluster.
	Node() string
	// Alive reports whether the node named runs now.
	Alive(ctx context.Context, node string) (bool, error)
	// OnGone has f called with the name of each node found gone from now on; stop ends that,
	// once a call of f in progress has returned.
	OnGone(f func(node string)) (stop func())
}

// turnLimiter is a Runner that bounds the turns it runs at once (0: no bound).
type turnLimiter interface {
	MaxTurns() int
}

// The paths the handler serves. The cmd helper mounts the whole handler; a WebSocket upgrade on
// any other path belongs to the device hub.
const (
	PathAgentCard     = a2asrv.WellKnownAgentCardPath // A2A 1.0 and 0.3 card (one union document)
	PathJSONRPC       = "/a2a"                        // A2A 1.0 JSON-RPC: SendMessage, SendStreamingMessage, GetTask, CancelTask, ...
	PathJSONRPCv03    = "/a2a/v0.3"                   // A2A 0.3 JSON-RPC: message/send, message/stream, tasks/get, tasks/cancel, ...
	PathSeedCard      = "/agent-card"                 // seed 004's card
	PathSeedSend      = "/tasks/send"                 // seed 004: tasks/send (also tasks/get, tasks/cancel)
	PathSeedStream    = "/tasks/send/stream"          // seed 004: tasks/send/stream, answered as SSE
	PathSeedTaskByID  = "/tasks/{id}"                 // seed 004: GET a task
	defaultName       = "devicectl agent"
	defaultDesc       = "Talks to the devices registered with this devicectl server: say what you want in Chinese or English and it calls their tools."
	defaultVersion    = "0.1.0"
	maxRequestBody    = 1 << 20
	defaultHistoryLen = 10
)

// Options configures New. New copies it before filling defaults.
type Options struct {
	// Runner runs the turns. Required.
	Runner Runner
	// DB keeps the tasks of both protocols, so that they survive a restart. Required: the agent's
	// database (agent/store.Open: SQLite, or PostgreSQL that several servers may share).
	DB *store.DB
	// Cluster is the cluster of serve nodes sharing DB this handler's node is one of; nil when
	// it is not in one, and then taken to be the only server on DB. Either way each task is
	// stored with the node that runs it (Cluster.Node(), else an id of this process's), and New
	// marks failed the tasks left submitted or working by its own node's previous run and by the
	// nodes not alive (without a cluster, every other); in a cluster, so are those of a node
	// found gone later.
	Cluster Cluster
	// Token, when set, is the bearer token every route but the agent cards requires.
	Token string
	// URL is the public base URL the cards advertise (e.g. "https://robot.example:8080");
	// "" advertises the address each request's connection arrived at. Never the request's Host
	// header, which the client chooses (a DNS-rebinding page would have the cards name it).
	URL string
	// Name, Description and Version are the cards' fields; "" picks a default.
	Name, Description, Version string
	// Now and NewID make timestamps and ids of the seed routes deterministic in tests.
	Now   func() time.Time
	NewID func() string
	// Logger gets the handler's logs; nil discards them.
	Logger *slog.Logger
	// MessageBytes bounds the text of one message (agent.limits.message_bytes): a larger one is
	// refused with -32600. 0 is 64 KiB.
	MessageBytes int64
	// TaskHistory bounds the messages one task holds (agent.limits.task_history): a send that
	// would take a task past it is refused with -32600. 0 is 200.
	TaskHistory int
	// TasksKeepAge and TasksKeepCount bound the tasks kept (agent.tasks.keep.age and .count): a
	// finished task (completed, canceled, failed) older than TasksKeepAge is deleted, and past
	// TasksKeepCount tasks the oldest finished ones are (the tasks of both protocols, at most
	// once a minute for the age); a running task never is. 0 is 30 days and 10000 tasks.
	TasksKeepAge   time.Duration
	TasksKeepCount int
}

// Handler is the agent's HTTP front door. Close it before closing the DB.
type Handler struct {
	o    Options
	mux  *http.ServeMux
	exec *executor
	rh   a2asrv.RequestHandler // a2a-go's, behind both A2A paths and the seed routes
	// tasks are the tasks of both protocols; a2a is the same store, as the tests inspect it.
	tasks taskStore
	a2a   *sqlTaskStore
	// pushes are the push notification configs, by task; notifier sends Notify's pushes.
	pushes   *push.InMemoryPushConfigStore
	notifier push.Sender

	node     string         // the node the tasks of this handler's turns are stored under
	stopGone func()         // ends the cluster's calls of nodeGone; nil without a cluster
	gone     sync.WaitGroup // the failNode runs nodeGone started
}

// pushTimeout bounds one push notification's POST.
const pushTimeout = 10 * time.Second

// New builds the handler and creates its tables in o.DB when missing.
func New(o *Options) (*Handler, error) {
	if o == nil || o.Runner == nil {
		return nil, errors.New("a2a: Options.Runner is required")
	}
	if o.DB == nil {
		return nil, errors.New("a2a: Options.DB is required (tasks are kept in it)")
	}
	opts := *o
	if opts.Name == "" {
		opts.Name = defaultName
	}
	if opts.Description == "" {
		opts.Description = defaultDesc
	}
	if opts.Version == "" {
		opts.Version = defaultVersion
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = randomID
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.URL = strings.TrimRight(opts.URL, "/")
	opts.TasksKeepAge, opts.TasksKeepCount = tasksKeep(opts.TasksKeepAge, opts.TasksKeepCount)

	ctx := context.Background()
	node := processNode()
	if opts.Cluster != nil {
		node = opts.Cluster.Node()
	}
	store, err := newSQLTaskStore(ctx, opts.DB, node, opts.Now, opts.TasksKeepAge, opts.TasksKeepCount, opts.Logger)
	if err != nil {
		return nil, err
	}
	h := &Handler{o: opts, tasks: store, a2a: store, node: node, pushes: push.NewInMemoryStore(),
		notifier: push.NewHTTPPushSender(&push.HTTPSenderConfig{Timeout: pushTimeout, FailOnError: true})}
	if opts.Cluster != nil {
		// Before looking at the tasks: a node that goes while New looks is not missed.
		h.stopGone = opts.Cluster.OnGone(h.nodeGone)
	}
	if err := h.failInterrupted(ctx); err != nil {
		h.stopNodeGone()
		h.tasks.close()
		return nil, err
	}
	maxTurns := 0
	if l, ok := opts.Runner.(turnLimiter); ok {
		maxTurns = l.MaxTurns()
	}
	h.exec = newExecutor(opts.Runner, maxTurns, opts.Logger)

	handlerOpts := []a2asrv.RequestHandlerOption{
		a2asrv.WithTaskStore(h.tasks),
		a2asrv.WithLogger(opts.Logger),
		a2asrv.WithCallInterceptors(&detailer{tasks: h.tasks, turns: h.exec.turns, maxTurns: maxTurns, messageBytes: h.messageBytes()}),
		// A receiver that fails is logged; the task goes on.
		a2asrv.WithPushNotifications(h.pushes, push.NewHTTPPushSender(&push.HTTPSenderConfig{Timeout: pushTimeout})),
	}
	if maxTurns > 0 {
		handlerOpts = append(handlerOpts, a2asrv.WithConcurrencyConfig(limiter.ConcurrencyConfig{MaxExecutions: 2 * maxTurns}))
	}
	reqHandler := a2asrv.NewHandler(h.exec, handlerOpts...)
	h.rh = reqHandler
	mux := http.NewServeMux()
	mux.Handle(PathAgentCard, a2asrv.NewAgentCardHandler(a2av0.NewAgentCardProducer(a2asrv.AgentCardProducerFn(h.a2aCard))))
	mux.HandleFunc("GET "+PathSeedCard, h.serveSeedCard)
	mux.Handle(PathJSONRPC, h.auth(precheck(methodsV1, a2asrv.NewJSONRPCHandler(reqHandler))))
	mux.Handle(PathJSONRPCv03, h.auth(precheck(methodsV03, a2av0.NewJSONRPCHandler(reqHandler))))
	mux.Handle("POST "+PathSeedSend, h.auth(http.HandlerFunc(h.serveSeedSend)))
	mux.Handle("POST "+PathSeedStream, h.auth(http.HandlerFunc(h.serveSeedStream)))
	mux.Handle("GET "+PathSeedTaskByID, h.auth(http.HandlerFunc(h.serveSeedGet)))
	h.mux = mux
	return h, nil
}

// ServeHTTP serves the routes listed by the Path constants.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The cards advertise absolute URLs: Options.URL, else the connection's local address.
	r = r.WithContext(context.WithValue(r.Context(), baseURLKey{}, h.baseURL(r)))
	h.mux.ServeHTTP(w, r)
}

// Handles reports whether the handler serves the request's path, so that the caller can send
// everything else (the device hub's WebSocket upgrades) elsewhere.
func (h *Handler) Handles(r *http.Request) bool {
	_, pattern := h.mux.Handler(r)
	return pattern != ""
}

// Close stops the turns still running, which end their tasks failed ("The server is shutting
// down"), and waits until those are stored; messages that arrive later are refused. Call it
// while shutting the HTTP server down (which waits for the request goroutines), before closing
// the DB.
func (h *Handler) Close() error {
	h.stopNodeGone()
	h.exec.turns.close()
	return h.tasks.close()
}

// stopNodeGone ends the cluster's calls of nodeGone and waits for the failNode they started.
func (h *Handler) stopNodeGone() {
	if h.stopGone != nil {
		h.stopGone()
	}
	h.gone.Wait()
}

type baseURLKey struct{}

func (h *Handler) baseURL(r *http.Request) string {
	if h.o.URL != "" {
		return h.o.URL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return scheme + "://" + a.String()
	}
	return scheme + "://localhost" // served without a net/http server (a test's recorder)
}

func baseURLFrom(ctx context.Context) string {
	s, _ := ctx.Value(baseURLKey{}).(string)
	return s
}

// auth requires the bearer token when one is configured.
func (h *Handler) auth(next http.Handler) http.Handler {
	if h.o.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authbearer.Matches(r, h.o.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
			writeJSON(w, http.StatusUnauthorized, rpcResponse{JSONRPC: "2.0", Error: &rpcError{
				Code: codeInvalidRequest, Message: messages[codeInvalidRequest],
				Data: &rpcErrorData{Details: "Missing or wrong bearer token in the Authorization header"},
			}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// failInterrupted marks failed the tasks left submitted or working by nodes that do not run
// now, whose turns died with them: this node's previous run (restarted under the same name),
// the nodes the cluster does not know alive, and without a cluster every other (tasks stored
// before nodes were recorded are the node ""). The tasks of live nodes are theirs to finish.
func (h *Handler) failInterrupted(ctx context.Context) error {
	nodes, err := h.tasks.unfinishedNodes(ctx)
	if err != nil {
		return err
	}
	for _, node := range nodes {
		why := "the server restarted while the task was running"
		if h.o.Cluster != nil && node != h.node && node != "" {
			alive, err := h.o.Cluster.Alive(ctx, node)
			if err != nil {
				// Its tasks are failed if the cluster finds it gone later.
				h.o.Logger.Warn("a2a: cannot tell whether a node with unfinished tasks runs", "node", node, "err", err)
				continue
			}
			if alive {
				continue
			}
			why = goneWhy(node)
		}
		n, err := h.tasks.failNode(ctx, node, why)
		if err != nil {
			return err
		}
		if n > 0 {
			h.o.Logger.Info("a2a: marked failed the tasks a stopped node left unfinished", "node", node, "tasks", n)
		}
	}
	return nil
}

// goneWhy is the status message of a task whose node is gone.
func goneWhy(node string) string {
	return fmt.Sprintf("the server node %s that ran the task stopped while it was running", node)
}

// nodeGone marks failed the tasks node left unfinished; the cluster calls it when it finds node
// gone.
func (h *Handler) nodeGone(node string) {
	h.gone.Go(func() {
		n, err := h.tasks.failNode(context.Background(), node, goneWhy(node))
		switch {
		case err != nil:
			h.o.Logger.Warn("a2a: marking failed the tasks of a node that is gone", "node", node, "err", err)
		case n > 0:
			h.o.Logger.Info("a2a: marked failed the tasks a node that is gone left unfinished", "node", node, "tasks", n)
		}
	})
}

// processNode is the node name of a server that is not in a cluster: its host's name and a
// random suffix, new in every process.
func processNode() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "serve"
	}
	return host + "-" + randomID()[:8]
}

func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("a2a: crypto/rand failed: %v", err)) // rand.Read never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}
