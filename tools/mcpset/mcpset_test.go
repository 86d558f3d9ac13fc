package mcpset_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/proc"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/mcpset"
)

func TestMain(m *testing.M) {
	if serve(os.Getenv(serverEnv)) {
		os.Exit(0)
	}
	os.Exit(leakcheck.Main(m))
}

// self is this test binary as a command. Under make test-armv6 and test-arm64 it runs in qemu,
// and so must a copy it starts: DEVICECTL_TEST_EXEC names the emulator then.
func self(args ...string) []string {
	return append(append(strings.Fields(os.Getenv("DEVICECTL_TEST_EXEC")), os.Args[0]), args...)
}

// running is a Set under Run, with every update it made.
type running struct {
	updates chan []*tools.Tool
	log     *logbuf.Buffer
	set     *mcpset.Set
	cancel  context.CancelFunc
	done    chan struct{}
}

// start runs a Set of this test binary as the stdio server mode (servers_test.go).
func start(t *testing.T, mode string, tune func(*mcpset.Options)) *running {
	t.Helper()
	r := &running{updates: make(chan []*tools.Tool, 100), log: &logbuf.Buffer{}, done: make(chan struct{})}
	o := &mcpset.Options{
		Name:        "test " + mode,
		Command:     self("-test.run=^$"),
		Env:         []string{serverEnv + "=" + mode, "DEVICECTL_TEST_EXEC=" + os.Getenv("DEVICECTL_TEST_EXEC")},
		Prefix:      mode + "_",
		InitTimeout: 10 * time.Second,
		Retry:       func(int) time.Duration { return 10 * time.Millisecond },
		Logger:      r.log.Logger(),
	}
	if tune != nil {
		tune(o)
	}
	set, err := mcpset.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.set = set
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		set.Run(ctx, func(ts []*tools.Tool) { r.updates <- ts })
	}()
	t.Cleanup(r.stop)
	return r
}

// stop ends Run and waits for it (and with it the server's process).
func (r *running) stop() {
	r.cancel()
	<-r.done
}

// next returns the next update, failing the test after 20s.
func (r *running) next(t *testing.T) []*tools.Tool {
	t.Helper()
	select {
	case ts := <-r.updates:
		return ts
	case <-time.After(time.Minute): // a 20,000-notification flood under qemu (make test-armv6) takes a while
		t.Fatalf("no update within a minute; log:\n%s", r.log)
		return nil
	}
}

func names(ts []*tools.Tool) []string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name)
	}
	return n
}

func find(t *testing.T, ts []*tools.Tool, name string) *tools.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s in %v", name, names(ts))
	return nil
}

func call(t *testing.T, tl *tools.Tool, input string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := tl.Invoke(ctx, json.RawMessage(input))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

// A stdio server's tools: declared with the prefix and the server's schema, the uncarriable ones
// left out with one warning each naming the set and the tool; calls forwarded, isError a
// failure, structured content the result; a tool added later comes with the next update.
func TestStdioServer(t *testing.T) {
	r := start(t, "lamp", func(o *mcpset.Options) { o.SubTypes = map[string]tools.SubType{"fail": tools.Control} })
	ts := r.next(t)
	want := []string{"lamp_crash", "lamp_echo", "lamp_fail", "lamp_grow", "lamp_power"}
	if got := names(ts); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	reg := tools.NewRegistry()
	for _, tl := range ts {
		if err := reg.Add(tl); err != nil {
			t.Errorf("the device's registry refuses %s: %v", tl.Name, err)
		}
	}
	echo := find(t, ts, "lamp_echo")
	if echo.MainType != tools.Remote || echo.SubType != tools.Query || echo.Description != "Say the text back." {
		t.Errorf("lamp_echo = %+v", echo.Declaration)
	}
	if p := echo.Parameters; p == nil || p.Properties["text"] == nil || p.Properties["text"].Description != "what to say back" || !slices.Equal(p.Required, []string{"text"}) {
		t.Errorf("lamp_echo parameters = %+v, want the server's schema", p)
	}
	if st := find(t, ts, "lamp_fail").SubType; st != tools.Control {
		t.Errorf("lamp_fail sub_type = %s, want the configured control", st)
	}
	log := r.log.String()
	for _, want := range []string{
		`tool=dim.level err="tools: tool \"lamp_dim.level\": name \"lamp_dim.level\" does not match`,
		`tool=remote err="tools: tool \"lamp_remote\": parameters: loading https://example.com/x.json`,
		`toolset="test lamp"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}

	if got, err := call(t, echo, `{"text":"hi"}`); err != nil || got != `"lamp says hi"` {
		t.Errorf("echo = %s, %v", got, err)
	}
	if got, err := call(t, find(t, ts, "lamp_power"), `{}`); err != nil || got != `{"watts":60}` {
		t.Errorf("power = %s, %v; want the structured content", got, err)
	}
	if _, err := call(t, find(t, ts, "lamp_fail"), `{}`); err == nil || err.Error() != "fail: the bulb is broken" {
		t.Errorf("fail = %v, want the server's text", err)
	}

	if _, err := call(t, find(t, ts, "lamp_grow"), `{}`); err != nil {
		t.Fatal(err)
	}
	grown := r.next(t)
	if got, err := call(t, find(t, grown, "lamp_late"), `{}`); err != nil || got != `"late but here"` {
		t.Errorf("late = %s, %v", got, err)
	}
	if n := strings.Count(r.log.String(), "cannot be a device tool"); n != 2 {
		t.Errorf("%d warnings about uncarriable tools after listing twice, want 2 (once each)", n)
	}
}

// A server that dies in the middle of a call: the call fails saying so, the set is withdrawn
// (nil), the program started again, and its tools come back and run.
func TestCrashMidCall(t *testing.T) {
	r := start(t, "lamp", nil)
	ts := r.next(t)
	_, err := call(t, find(t, ts, "lamp_crash"), `{}`)
	if err == nil || !strings.Contains(err.Error(), "MCP server test lamp: crash: the server went away during the call (it is started again)") {
		t.Errorf("crash = %v, want the server gone named", err)
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("crash = %v, want it to wrap the io.EOF of the program's stdout", err)
	}
	if down := r.next(t); down != nil {
		t.Errorf("after the crash the update = %v, want nil (left out)", names(down))
	}
	back := r.next(t)
	if got, err := call(t, find(t, back, "lamp_echo"), `{"text":"again"}`); err != nil || got != `"lamp says again"` {
		t.Errorf("echo after the restart = %s, %v", got, err)
	}
	// The tools handed out before the crash reach the new session too.
	if got, err := call(t, find(t, ts, "lamp_echo"), `{"text":"old"}`); err != nil || got != `"lamp says old"` {
		t.Errorf("the old echo after the restart = %s, %v", got, err)
	}
	log := r.log.String()
	for _, want := range []string{"MCP server gone; its tools are left out until it is back", "exit status 3", "its stderr ends: lamp: crashing on purpose"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// A server that never answers initialize: the set gets no tools, the failure says why, and
// stopping kills its process group, the helper it started included.
func TestNeverInitializes(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	r := start(t, "silent", func(o *mcpset.Options) {
		o.InitTimeout = 300 * time.Millisecond
		o.Env = append(o.Env, "MCPSET_PIDS="+pids)
		o.Retry = func(int) time.Duration { return time.Hour }
	})
	r.log.WaitFor(t, "failure logged", func(s string) bool { return strings.Contains(s, "MCP server not available") })
	if want := "initialize: no answer within 300ms"; !strings.Contains(r.log.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, r.log)
	}
	select {
	case ts := <-r.updates:
		t.Errorf("a silent server's set was updated with %v", names(ts))
	default:
	}
	r.stop()
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		proc.WaitGone(t, "a process of the silent server's group, after the set stopped", pid)
	}
}

// A server that floods notifications/tools/list_changed: a handful of tools/list, no log line
// per notification, and no goroutines left growing.
func TestNotificationFlood(t *testing.T) {
	mark := leakcheck.Now()
	r := start(t, "flood", func(o *mcpset.Options) {
		o.RelistEvery = 100 * time.Millisecond
		// The answer to tools/list comes after the whole flood, which takes the client about 10 s
		// under qemu (make test-armv6): what is tested is the coalescing, not that time.
		o.InitTimeout = 45 * time.Second
	})
	ts := r.next(t)
	lists := find(t, ts, "flood_lists")
	// The flood is sent before the server reads the next request, so by the time a call is
	// answered every notification has arrived.
	if _, err := call(t, lists, `{}`); err != nil {
		t.Fatal(err)
	}
	// The flood leaves a relist pending behind the first tools/list: wait for it to be made, as
	// the server counts it, then see that no more followed.
	n := 0
	for deadline := time.Now().Add(10 * time.Second); n < 2; {
		got, err := call(t, lists, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		n, _ = strconv.Atoi(strings.Trim(got, `"`))
		if n < 2 && time.Now().After(deadline) {
			t.Fatalf("%d tools/list within 10s of the flood, want the relist it causes", n)
		}
	}
	got, err := call(t, lists, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	n, _ = strconv.Atoi(strings.Trim(got, `"`))
	t.Logf("%d tools/list for %d list_changed", n, floodCount)
	if n < 1 || n > 5 {
		t.Errorf("%d tools/list for %d list_changed, want 1..5", n, floodCount)
	}
	if lines := strings.Count(r.log.String(), "\n"); lines > 5 {
		t.Errorf("%d log lines for the flood, want a few:\n%s", lines, r.log)
	}
	if started := mark.Started(); len(started) > 30 {
		t.Errorf("%d goroutines started during the session: the flood left them", len(started))
	}
	r.stop()
}

// A Streamable HTTP server behind a bearer token: the token is sent, and a wrong one is an error
// that says so.
func TestHTTPServer(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "hello", Description: "Say hello."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer hs.Close()

	for _, tc := range []struct {
		token string
		want  []string
		err   string
	}{
		{"right", []string{"web_hello"}, ""},
		{"wrong", nil, "Unauthorized"},
	} {
		set, err := mcpset.New(&mcpset.Options{Name: "web", URL: hs.URL, BearerToken: tc.token, Prefix: "web_", HTTPClient: hs.Client()})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := set.Load(t.Context())
		if got := names(ts); !slices.Equal(got, tc.want) || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("token %s: Load = %v, %v; want %v, an error with %q", tc.token, got, err, tc.want, tc.err)
		}
	}
}

// New refuses what cannot work, saying what.
func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		o    mcpset.Options
		want string
	}{
		{mcpset.Options{}, "neither Command nor URL"},
		{mcpset.Options{Command: []string{"x"}, URL: "http://x"}, "not both"},
		{mcpset.Options{Command: []string{""}}, "empty program name"},
		{mcpset.Options{Command: []string{"no-such-program-mcpset"}}, `program "no-such-program-mcpset": exec: "no-such-program-mcpset": executable file not found`},
	} {
		if _, err := mcpset.New(&tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}
