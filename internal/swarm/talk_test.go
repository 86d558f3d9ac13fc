//go:build !devicectl_omit_serve || !devicectl_omit_sim

package swarm

import (
	"bufio"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/servetest"
)

// startAgentd serves a real agent server (the rule planner, a database in a test directory) on
// loopback until the test ends, with token as its agent.token_file's token when set; it returns
// the devices' ws:// URL.
func startAgentd(t *testing.T, token string) string {
	t.Helper()
	c := config.Defaults()
	if token != "" {
		c.Agent.TokenFile = servetest.WriteToken(t, token)
	}
	_, addr := servetest.Start(t, c)
	return "ws://" + addr + "/"
}

// swarmRun is a swarm of real devices (FromConfig) running until stop; its output is read line
// by line.
type swarmRun struct {
	lines  chan string
	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned err
	err    error
}

func startSwarm(t *testing.T, server string, n int, talk *Talk) *swarmRun {
	t.Helper()
	c := config.Defaults()
	c.Server.URL = server
	c.Log.Level = 8 // above error: the test reads the status lines, not logs
	p, err := NewPlan(n, "02-DC-7A", 0, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	outR, outW := io.Pipe()
	s, err := FromConfig(c, p, &ConfigIO{Out: outW, Err: io.Discard, Getenv: func(string) string { return "" }, Version: "test", Talk: talk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &swarmRun{lines: make(chan string, 4096), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	go func() {
		r.err = s.Run(ctx)
		outW.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		for range r.lines {
		}
	})
	return r
}

// waitFor returns the submatches of the first line matching re, failing the test after a
// generous timeout.
func (r *swarmRun) waitFor(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				t.Fatalf("output ended before a line matching %q", re)
			}
			if m := rx.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("no line matching %q within 20s", re)
		}
	}
}

// stop stops the swarm and returns the summary's lines.
func (r *swarmRun) stop(t *testing.T) string {
	t.Helper()
	r.cancel()
	<-r.done
	if r.err != nil {
		t.Fatal(r.err)
	}
	var b strings.Builder
	for line := range r.lines {
		b.WriteString(line + "\n")
	}
	_, summary, ok := strings.Cut(b.String(), "swarm stopped after")
	if !ok {
		t.Fatalf("no summary in\n%s", b.String())
	}
	return summary
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Against a real agent server, on either route, the tasks complete, each one's amplify_volume
// call reaches a swarm device (the calls counter moves with the tasks), and nothing fails.
func TestTalkAgentd(t *testing.T) {
	for _, route := range []string{"seed", "a2a"} {
		t.Run(route, func(t *testing.T) {
			const token = "s3cret-token"
			server := startAgentd(t, token)
			talk, err := NewTalk(200, "把音量调到30", route, 4, server)
			if err != nil {
				t.Fatal(err)
			}
			talk.Token = token
			r := startSwarm(t, server, 3, &talk)
			m := r.waitFor(t, `registered 3/3  calls (\d+) .*  tasks (\d+) \(\+\d+, \d+/s: p50 \S+ p90 \S+ p99 \S+\)`)
			for atoi(t, m[2]) < 20 {
				m = r.waitFor(t, `calls (\d+) .*  tasks (\d+) \(`)
			}
			if strings.Contains(m[0], "failed") {
				t.Errorf("status line %q: tasks failed", m[0])
			}
			summary := r.stop(t)
			t.Logf("summary:%s", summary)
			sm := regexp.MustCompile(`calls       (\d+):(?s:.*)tasks       (\d+) completed in \S+, [\d.]+/s \(` + route + ` /\S+ at 200/s, 4 callers\): p50 \S+, p90 \S+, p99 \S+, max \S+\n +(\d+) sent, \d+ behind \(every caller busy\), (\d+) cut short by the stop; 0 failed\n`).FindStringSubmatch(summary)
			if sm == nil {
				t.Fatalf("summary does not match")
			}
			calls, done, sent, cut := atoi(t, sm[1]), atoi(t, sm[2]), atoi(t, sm[3]), atoi(t, sm[4])
			if done < 20 || sent != done+cut {
				t.Errorf("%d completed, %d sent, %d cut short: want at least 20 completed, the rest cut short", done, sent, cut)
			}
			// Each completed task's turn called amplify_volume on the device it named.
			if calls < done {
				t.Errorf("%d calls reached the devices for %d completed tasks", calls, done)
			}
		})
	}
}

// A wrong token: every task fails, counted as http 401, on the status line and in the summary;
// the devices themselves are unaffected.
func TestTalkWrongToken(t *testing.T) {
	server := startAgentd(t, "the-right-one")
	talk, err := NewTalk(100, DefaultTalkText, "seed", 2, server)
	if err != nil {
		t.Fatal(err)
	}
	talk.Token = "a-wrong-one"
	r := startSwarm(t, server, 2, &talk)
	m := r.waitFor(t, `registered 2/2  calls 0 \(\+0\)  tasks 0 \(.*\)(?:  behind \d+)?  failed (\d+) \(http 401 (\d+)\)$`)
	if m[1] != m[2] || atoi(t, m[1]) == 0 {
		t.Errorf("status line %q", m[0])
	}
	summary := r.stop(t)
	if !regexp.MustCompile(`tasks       0 completed in .*\n.* (\d+) failed: http 401 (\d+)\n`).MatchString(summary) {
		t.Errorf("summary:%s", summary)
	}
}

// fakeRoundTripper answers each task after wait(i) of (fake) time with answer, or holds it until
// the task's context ends when wait returns a negative duration.
type fakeRoundTripper struct {
	wait   func(i int) time.Duration
	fail   func(i int) bool // answer 503 instead
	status int
	answer string
	mu     sync.Mutex
	n      int
}

func (f *fakeRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	i := f.n
	f.n++
	f.mu.Unlock()
	req.Body.Close()
	d := f.wait(i)
	if d < 0 {
		d = math.MaxInt64
	}
	select {
	case <-time.After(d):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	status, answer := f.status, f.answer
	if f.fail != nil && f.fail(i) {
		status, answer = http.StatusServiceUnavailable, "too many turns at once\x1b[2J\n"
	}
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(answer)), Header: http.Header{}}, nil
}

const completedSeed = `{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"completed"}}}`

// fakeTalker is a talker whose requests go to rt, in a synctest bubble's fake time.
func fakeTalker(t *testing.T, rate float64, callers int, rt http.RoundTripper) *talker {
	t.Helper()
	talk, err := NewTalk(rate, DefaultTalkText, "seed", callers, "ws://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	k := newTalker(talk, 4, func(i int) string { return MAC([]byte{2}, i) })
	k.client = &http.Client{Transport: rt}
	return k
}

// runFor runs k for d of fake time and stops it.
func runFor(k *talker, d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	close(ready)
	done := make(chan struct{})
	go func() { k.run(ctx, ready); close(done) }()
	time.Sleep(d)
	synctest.Wait()
	cancel()
	<-done
}

// The schedule is open loop: RATE tasks a second are due whatever the server does. Tasks due
// while every caller is busy are counted behind, not sent; the ones the stop cuts short are
// not failures.
func TestTalkOpenLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fast := &fakeRoundTripper{wait: func(int) time.Duration { return 0 }, status: 200, answer: completedSeed}
		k := fakeTalker(t, 100, 2, fast)
		runFor(k, time.Second)
		if k.completed.Load() != 100 || k.behind.Load() != 0 || k.interrupted.Load() != 0 {
			t.Errorf("a fast server: %d completed, %d behind, %d cut short; want 100, 0, 0", k.completed.Load(), k.behind.Load(), k.interrupted.Load())
		}
		if got := k.elapsed(); got != time.Second {
			t.Errorf("elapsed %s, want 1s", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		stuck := &fakeRoundTripper{wait: func(int) time.Duration { return -1 }, status: 200, answer: completedSeed}
		k := fakeTalker(t, 100, 2, stuck)
		runFor(k, time.Second)
		if k.sent.Load() != 2 || k.behind.Load() != 98 || k.interrupted.Load() != 2 || k.completed.Load() != 0 {
			t.Errorf("a server that never answers: %d sent, %d behind, %d cut short, %d completed; want 2, 98, 2, 0",
				k.sent.Load(), k.behind.Load(), k.interrupted.Load(), k.completed.Load())
		}
		if n, kinds := k.errorKinds(); n != 0 {
			t.Errorf("failures %d: %s; the stop's are not failures", n, kinds)
		}
	})
}

// The percentiles of the tasks' times, from a server whose answer times are known: 1ms to 100ms,
// one of each, in turn.
func TestTalkPercentiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first 1000 tasks take 1ms to 100ms, ten of each; the later ones are held until the
		// stop, which does not count them.
		wait := func(i int) time.Duration {
			if i >= 1000 {
				return -1
			}
			return time.Duration(i%100+1) * time.Millisecond
		}
		rt := &fakeRoundTripper{wait: wait, status: 200, answer: completedSeed}
		k := fakeTalker(t, 1000, 400, rt)
		runFor(k, 1200*time.Millisecond) // the 1000th is due at 1s and answered by 1.1s
		var c histCounts
		k.lat.snapshot(&c)
		if c.total() != 1000 || k.behind.Load() != 0 {
			t.Fatalf("%d tasks completed, %d behind; want 1000, 0", c.total(), k.behind.Load())
		}
		m := time.Duration(k.lat.max.Load())
		if m != 100*time.Millisecond {
			t.Errorf("max %s, want 100ms", m)
		}
		for _, q := range []struct {
			q    float64
			want time.Duration
		}{{0.5, 50 * time.Millisecond}, {0.9, 90 * time.Millisecond}, {0.99, 99 * time.Millisecond}} {
			if got := c.quantile(q.q, m); math.Abs(float64(got-q.want))/float64(q.want) > 1.0/32 {
				t.Errorf("p%g = %s, want %s within 3%%", q.q*100, got, q.want)
			}
		}
	})
}

// A server that answers 503 (serve's limit on turns, a proxy with no backend): every task is a
// failure of that kind.
func TestTalkCountsErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRoundTripper{wait: func(int) time.Duration { return 0 }, status: 503, answer: "busy"}
		k := fakeTalker(t, 50, 4, rt)
		runFor(k, time.Second)
		if n, kinds := k.errorKinds(); n != 50 || kinds != "http 503 50" || k.completed.Load() != 0 {
			t.Errorf("%d failed (%s), %d completed; want 50 http 503, none completed", n, kinds, k.completed.Load())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		rt := &fakeRoundTripper{wait: func(int) time.Duration { return time.Minute }, status: 200, answer: completedSeed}
		k := fakeTalker(t, 10, 20, rt)
		k.t.Timeout = 450 * time.Millisecond
		runFor(k, time.Second)
		if n, kinds := k.errorKinds(); n != 5 || kinds != "timeout 5" || k.interrupted.Load() != 5 {
			t.Errorf("%d failed (%s), %d cut short; want the 5 tasks due in the first half second to time out, the rest cut short", n, kinds, k.interrupted.Load())
		}
	})
}

// Each route's answers, as serve writes them: completed, a JSON-RPC error, a failed task.
func TestTaskOutcome(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":"request-id-1","result":{"id":"task-id-1","sessionId":"s","status":{"state":"completed","message":{"role":"agent","parts":[{"type":"text","text":"好的"}]}}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_FAILED"}}}}`, "task failed"},
		{`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}}`, "task input-required"},
		{`{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"canceled"}}}`, "task canceled"},
		{`{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}`, "no task"},
		{`{"jsonrpc":"2.0","id":"r","error":{"code":-32602,"message":"Invalid parameters","data":{"details":"Unknown device"}}}`, "rpc -32602"},
		{`{"jsonrpc":"2.0","id":1,"result":{"status":{}}}`, "bad answer"},
		{`{"jsonrpc":"2.0","id":1}`, "bad answer"},
		{`<html>`, "bad answer"},
	} {
		if got := taskOutcome([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}

// The request bodies name device i mod n and carry the text JSON-escaped.
func TestTalkBody(t *testing.T) {
	for _, tc := range []struct{ route, want string }{
		{"seed", `{"jsonrpc":"2.0","id":5,"method":"tasks/send","params":{"message":{"role":"user","parts":[{"type":"text","text":"say \"hi\""}]},"metadata":{"mac":"02-00-00-00-00-01"}}}`},
		{"a2a", `{"jsonrpc":"2.0","id":5,"method":"SendMessage","params":{"message":{"messageId":"swarm-5","role":"ROLE_USER","parts":[{"text":"say \"hi\""}],"metadata":{"mac":"02-00-00-00-00-01"}}}}`},
	} {
		talk, err := NewTalk(1, `say "hi"`, tc.route, 1, "wss://h:1/x")
		if err != nil {
			t.Fatal(err)
		}
		k := newTalker(talk, 4, func(i int) string { return MAC([]byte{2}, i) })
		if got := string(k.body(5)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.route, got, tc.want)
		}
	}
}

func TestNewTalk(t *testing.T) {
	talk, err := NewTalk(10, "hi", "a2a", 3, "wss://agent.example:8765/device?x=1")
	if err != nil || talk.URL.String() != "https://agent.example:8765/a2a" {
		t.Errorf("NewTalk: %v, URL %v", err, talk.URL)
	}
	for _, tc := range []struct {
		rate    float64
		text    string
		route   string
		callers int
		server  string
		want    string
	}{
		{-1, "hi", "seed", 1, "ws://h/", "--talk -1: want a positive number"},
		{math.NaN(), "hi", "seed", 1, "ws://h/", "--talk NaN"},
		{math.Inf(1), "hi", "seed", 1, "ws://h/", "--talk +Inf"},
		{1, " ", "seed", 1, "ws://h/", "--text: want something for the tasks to say"},
		{1, strings.Repeat("长", 1001), "seed", 1, "ws://h/", "--text: 1001 characters; the server takes at most 1000"},
		{1, "hi", "grpc", 1, "ws://h/", `--route "grpc": want seed`},
		{1, "hi", "seed", 0, "ws://h/", "--callers 0: want at least 1"},
		{1, "hi", "seed", 1, "http://h/", "want a ws:// or wss:// URL"},
	} {
		_, err := NewTalk(tc.rate, tc.text, tc.route, tc.callers, tc.server)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewTalk(%g, %.10q, %q, %d, %q): %v, want %q", tc.rate, tc.text, tc.route, tc.callers, tc.server, err, tc.want)
		}
	}
}

// The status line and the summary, exactly, in fake time: tasks start once every device has
// registered; each status line has the tasks of its interval and their rate; the summary the
// totals.
func TestTalkStatusSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := NewPlan(2, "02-DC", 0, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		talk, err := NewTalk(10, DefaultTalkText, "seed", 2, "ws://127.0.0.1:1/")
		if err != nil {
			t.Fatal(err)
		}
		var out logbuf.Buffer
		s, err := New(p, &Options{Out: &out, Talk: &talk, Build: func(d *Device) (Agent, func() error, error) {
			return &fakeAgent{d: d}, nil, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Every task takes 4ms; every fifth is answered 503.
		s.talk.client = &http.Client{Transport: &fakeRoundTripper{wait: func(int) time.Duration { return 4 * time.Millisecond },
			fail: func(i int) bool { return i%5 == 4 }, status: 200, answer: completedSeed}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		time.Sleep(1550 * time.Millisecond)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// At 1s, the tasks due at 0.1s to 0.9s are answered (the one due at 1s is not yet): 8
		// completed, 1 failed. By the stop at 1.55s, 15 were due: 12 completed, 3 failed.
		want := "1s  connected 2/2  registered 2/2  calls 2 (+2: p50 999µs p99 2ms max 2ms)  messages 2  tasks 8 (+8, 8/s: p50 4ms p90 4ms p99 4ms)  failed 1 (http 503 1)\n" +
			"2s  connected 0/2  registered 0/2  calls 2 (+0)  messages 2  tasks 12 (+4, 7/s: p50 4ms p90 4ms p99 4ms)  failed 3 (http 503 3)\n" +
			"swarm stopped after 1.55s: 2 devices\n" +
			"  registered  all 2, 1ns after the start; 2 registrations, 0 lines lost\n" +
			"  calls       2: p50 999µs, p99 2ms, max 2ms; 0 answered with an error\n" +
			"  messages    2\n" +
			"  tasks       12 completed in 1.55s, 7.7/s (seed /tasks/send at 10/s, 2 callers): p50 4ms, p90 4ms, p99 4ms, max 4ms\n" +
			"              15 sent, 0 behind (every caller busy), 0 cut short by the stop; 3 failed: http 503 3\n" +
			`              latest failure: "http 503: too many turns at once\x1b[2J"` + "\n"
		if got := out.String(); got != want {
			t.Errorf("output:\n%s\nwant:\n%s", got, want)
		}
	})
}

// A real loopback server that answers 503, as serve does at agent.limits.turns: the status line
// counts the tasks as failed by that kind, and the summary quotes the server's answer.
func TestTalkServer503(t *testing.T) {
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tasks/send" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s, Content-Type %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		http.Error(w, "too many turns at once (agent.limits.turns 256)", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	p, err := NewPlan(2, "02-DC", 0, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	// More than one caller could send: some tasks are behind, and the status line says so too.
	talk, err := NewTalk(2000, DefaultTalkText, "seed", 1, strings.Replace(busy.URL, "http://", "ws://", 1)+"/")
	if err != nil {
		t.Fatal(err)
	}
	outR, outW := io.Pipe()
	s, err := New(p, &Options{Out: outW, Talk: &talk, Build: func(d *Device) (Agent, func() error, error) {
		return &fakeAgent{d: d}, nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := &swarmRun{lines: make(chan string, 4096), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	go func() {
		r.err = s.Run(ctx)
		outW.Close()
		close(r.done)
	}()
	for {
		m := r.waitFor(t, `  tasks 0 \(.*\)(?:  behind \d+)?  failed (\d+) \(http 503 (\d+)\)$`)
		if m[1] != m[2] {
			t.Fatalf("status line %q: failures of another kind", m[0])
		}
		if atoi(t, m[1]) >= 5 {
			break
		}
	}
	summary := r.stop(t)
	if m := regexp.MustCompile(`(\d+) behind \(every caller busy\)`).FindStringSubmatch(summary); m == nil || m[1] == "0" {
		t.Errorf("summary: no task behind at 2000/s with 1 caller:%s", summary)
	}
	if !strings.Contains(summary, `latest failure: "http 503: too many turns at once (agent.limits.turns 256)"`) {
		t.Errorf("summary:%s", summary)
	}
}
