package swarm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Route is the HTTP route a swarm's tasks take to the server.
type Route string

const (
	// RouteSeed is seed 004's POST /tasks/send (JSON-RPC tasks/send), answered when the turn ends.
	RouteSeed Route = "seed"
	// RouteA2A is A2A 1.0's POST /a2a (JSON-RPC SendMessage), answered when the turn ends.
	RouteA2A Route = "a2a"
)

const (
	// DefaultTalkText is what a task says unless --text: a command the rule planner carries out
	// on a simulated device with one tool call (amplify_volume).
	DefaultTalkText = "把音量调到30"
	// DefaultCallers is the default cap on tasks in flight.
	DefaultCallers = 64
	// TalkTimeout is how long one task may take, from the request to the whole answer.
	TalkTimeout = 30 * time.Second
	// maxTalkText is the longest utterance the server's planners take.
	maxTalkText = 1000
	// maxReply is the most of an answer read: a task's answer holds the reply, its history and
	// artifacts, a few KiB.
	maxReply = 1 << 20
)

// Talk is a checked load generator: tasks the swarm sends the server over HTTP, each naming one
// of the swarm's devices in metadata.mac, round-robin. NewTalk makes one.
type Talk struct {
	Rate    float64 // tasks a second in all, open loop
	Text    string  // what every task says
	Route   Route
	Callers int      // tasks in flight at most; a task due while all are busy is counted behind
	URL     *url.URL // the route's full URL on the server
	// Token, when set, is sent as "Authorization: Bearer" (serve's agent.token_file).
	Token string
	// TLS is the client's TLS settings for an https URL; nil: the system's.
	TLS *tls.Config
	// Timeout bounds each task; 0 is TalkTimeout.
	Timeout time.Duration
}

// NewTalk checks the load generator's flags; each error names the flag at fault (--talk, --text,
// --route, --callers) and is the user's to fix. server is the devices' ws:// or wss:// URL: the
// tasks go to the same host over http or https.
func NewTalk(rate float64, text, route string, callers int, server string) (Talk, error) {
	t := Talk{Rate: rate, Text: text, Route: Route(route), Callers: callers}
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0 {
		return t, fmt.Errorf("--talk %g: want a positive number of tasks a second (0 or no --talk: none)", rate)
	}
	if strings.TrimSpace(text) == "" {
		return t, errors.New("--text: want something for the tasks to say, e.g. " + DefaultTalkText)
	}
	if n := utf8.RuneCountInString(text); n > maxTalkText {
		return t, fmt.Errorf("--text: %d characters; the server takes at most %d", n, maxTalkText)
	}
	path := ""
	switch t.Route {
	case RouteSeed:
		path = "/tasks/send"
	case RouteA2A:
		path = "/a2a"
	default:
		return t, fmt.Errorf("--route %q: want seed (POST /tasks/send) or a2a (A2A 1.0 SendMessage on /a2a)", route)
	}
	if callers < 1 {
		return t, fmt.Errorf("--callers %d: want at least 1 task in flight", callers)
	}
	u, err := url.Parse(server)
	if err != nil {
		return t, fmt.Errorf("--server %q: %w", server, err)
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return t, fmt.Errorf("--server %q: want a ws:// or wss:// URL for the tasks to follow", server)
	}
	t.URL = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: path}
	return t, nil
}

// talker sends a Talk's tasks and counts how they end. The counters are atomics, as callers
// finish on many goroutines at once; the errors, rarer, are a map under a mutex.
type talker struct {
	t      Talk
	client *http.Client
	mac    func(i int) string // the MAC task i names
	n      int                // devices

	started     atomic.Int64 // UnixNano when the first task was due; 0 until then
	stopped     atomic.Int64 // UnixNano when the last was
	sent        atomic.Int64 // tasks handed to a caller
	completed   atomic.Int64
	behind      atomic.Int64 // tasks due while every caller was busy: not sent
	interrupted atomic.Int64 // cut short by the stop
	lat         latencyHist  // of completed tasks, request to whole answer

	mu     sync.Mutex
	errs   map[string]int64 // by kind: "http 503", "rpc -32602", "task failed", "timeout", ...
	latest string           // the latest failure's kind and what the server said
}

// maxDetail is how much of a failed task's answer the summary quotes.
const maxDetail = 300

func newTalker(t Talk, n int, mac func(int) string) *talker {
	if t.Timeout <= 0 {
		t.Timeout = TalkTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// One kept-alive connection per caller: with Go's default of 2 idle per host, most tasks
	// would dial anew, and the figures would be the dials'.
	tr.MaxIdleConns = t.Callers
	tr.MaxIdleConnsPerHost = t.Callers
	tr.TLSClientConfig = t.TLS
	return &talker{t: t, client: &http.Client{Transport: tr}, mac: mac, n: n, errs: map[string]int64{}}
}

// run sends tasks at the rate until ctx is done, from the moment ready is closed, and returns
// once every caller has finished. Tasks are due on a schedule (open loop): a slow server does
// not slow the schedule, it leaves callers busy, and tasks due then are counted behind.
func (k *talker) run(ctx context.Context, ready <-chan struct{}) {
	defer k.client.CloseIdleConnections()
	select {
	case <-ready:
	case <-ctx.Done():
		return
	}
	jobs := make(chan int) // unbuffered: a send succeeds only if a caller is waiting
	var callers sync.WaitGroup
	for range k.t.Callers {
		callers.Go(func() {
			for i := range jobs {
				k.send(ctx, i)
			}
		})
	}
	defer callers.Wait()
	defer close(jobs)

	start := time.Now()
	k.started.Store(start.UnixNano())
	defer func() { k.stopped.Store(time.Now().UnixNano()) }()
	// Wake often enough that at most a millisecond's tasks are due at once.
	tick := time.NewTicker(max(time.Millisecond, time.Duration(float64(time.Second)/k.t.Rate)))
	defer tick.Stop()
	due := int64(0) // tasks due so far, sent or behind
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			// The epsilon keeps 10/s at 300ms from being 2.9999999999999996 tasks.
			for until := int64(k.t.Rate*now.Sub(start).Seconds() + 1e-6); due < until; due++ {
				select {
				case jobs <- int(due):
					k.sent.Add(1)
				default:
					k.behind.Add(1)
				}
			}
		}
	}
}

// send sends task i and counts how it ended.
func (k *talker) send(ctx context.Context, i int) {
	tctx, cancel := context.WithTimeout(ctx, k.t.Timeout)
	defer cancel()
	body := k.body(i)
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, k.t.URL.String(), bytes.NewReader(body))
	if err != nil {
		k.fail("request", err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if k.t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+k.t.Token)
	}
	start := time.Now()
	kind, detail := k.do(req)
	took := time.Since(start)
	switch {
	case kind == "":
		k.lat.add(took)
		k.completed.Add(1)
	case ctx.Err() != nil:
		k.interrupted.Add(1)
	case tctx.Err() != nil:
		k.fail("timeout", fmt.Sprintf("no whole answer within %s", k.t.Timeout))
	default:
		k.fail(kind, detail)
	}
}

// do sends req and reads the answer: "" if the task completed, else the kind of failure and
// what the server said (or the error).
func (k *talker) do(req *http.Request) (kind, detail string) {
	resp, err := k.client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "timeout", err.Error()
		}
		return "connection", err.Error()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return "connection", err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		kind = "http " + strconv.Itoa(resp.StatusCode)
	} else {
		kind = taskOutcome(data)
	}
	if kind == "" {
		return "", ""
	}
	detail = strings.TrimSpace(strings.ToValidUTF8(string(data[:min(len(data), maxDetail)]), ""))
	return kind, detail
}

// taskOutcome reads a JSON-RPC answer of either route: "" if it carries a completed task, else
// the kind of failure ("rpc -32602", "task failed", "bad answer").
func taskOutcome(data []byte) string {
	type status struct {
		State string `json:"state"`
	}
	var r struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
		Result *struct {
			Status *status `json:"status"` // seed: the task itself
			Task   *struct {
				Status *status `json:"status"`
			} `json:"task"` // A2A 1.0: {"task": {...}} or {"message": {...}}
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "bad answer"
	}
	if r.Error != nil {
		return "rpc " + strconv.Itoa(r.Error.Code)
	}
	if r.Result == nil {
		return "bad answer"
	}
	st := r.Result.Status
	if st == nil && r.Result.Task != nil {
		st = r.Result.Task.Status
	}
	if st == nil {
		return "no task" // a reply message without a task: the server did not run one
	}
	switch state := strings.ToLower(strings.TrimPrefix(st.State, "TASK_STATE_")); state {
	case "completed":
		return ""
	case "":
		return "bad answer"
	default:
		return "task " + strings.ReplaceAll(state, "_", "-")
	}
}

// body is task i's request: the text, naming device i mod n.
func (k *talker) body(i int) []byte {
	text, _ := json.Marshal(k.t.Text) // a string always marshals
	mac := k.mac(i % k.n)
	var b bytes.Buffer
	switch k.t.Route {
	case RouteA2A:
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"swarm-%d","role":"ROLE_USER","parts":[{"text":%s}],"metadata":{"mac":%q}}}}`, i, i, text, mac)
	default:
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tasks/send","params":{"message":{"role":"user","parts":[{"type":"text","text":%s}]},"metadata":{"mac":%q}}}`, i, text, mac)
	}
	return b.Bytes()
}

// setTLS sets the client's TLS settings, before run.
func (k *talker) setTLS(c *tls.Config) {
	k.t.TLS = c
	k.client.Transport.(*http.Transport).TLSClientConfig = c
}

func (k *talker) fail(kind, detail string) {
	k.mu.Lock()
	k.errs[kind]++
	k.latest = kind + ": " + detail
	k.mu.Unlock()
}

func (k *talker) latestFailure() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.latest
}

// errors is the failed tasks' count and their kinds, most frequent first: "http 503 3, timeout 1".
func (k *talker) errorKinds() (int64, string) {
	k.mu.Lock()
	type kc struct {
		kind string
		n    int64
	}
	var all []kc
	var total int64
	for kind, n := range k.errs {
		all = append(all, kc{kind, n})
		total += n
	}
	k.mu.Unlock()
	slices.SortFunc(all, func(a, b kc) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.kind, b.kind))
	})
	parts := make([]string, len(all))
	for i, x := range all {
		parts[i] = fmt.Sprintf("%s %d", x.kind, x.n)
	}
	return total, strings.Join(parts, ", ")
}

// elapsed is how long the tasks have been due: until now, or until the stop.
func (k *talker) elapsed() time.Duration {
	start := k.started.Load()
	if start == 0 {
		return 0
	}
	end := k.stopped.Load()
	if end == 0 {
		end = time.Now().UnixNano()
	}
	return time.Duration(end - start)
}
