package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
)

// registration is the printed request, decoded.
type registration struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      json.RawMessage `json:"id"`
	Params  struct {
		MAC   string            `json:"mac_addr"`
		Tools []json.RawMessage `json:"tools"`
	} `json:"params"`
}

func TestToolsPrintsRegistration(t *testing.T) {
	for _, lang := range []string{"zh", "en"} {
		t.Run(lang, func(t *testing.T) {
			r := runCLI(t.Context(), "", "tools", "--config", "/dev/null", "--mac", "aa:bb:cc:dd:ee:01", "--language", lang)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got registration
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, r.stdout)
			}
			if got.JSONRPC != "2.0" || got.Method != protocol.MethodRegisterTools || string(got.ID) != `"reg-1"` || got.Params.MAC != "AA-BB-CC-DD-EE-01" {
				t.Errorf("envelope: jsonrpc %q, method %q, id %s, mac %q", got.JSONRPC, got.Method, got.ID, got.Params.MAC)
			}

			// The tools are the registry's declarations, byte for byte.
			c := config.Defaults()
			c.Device.Language = lang
			reg, err := devhw.NewRegistry(devhw.Sim(nil), c, buildVersion(), nil)
			if err != nil {
				t.Fatal(err)
			}
			decls := reg.Declarations()
			if len(got.Params.Tools) != len(decls) || len(decls) == 0 {
				t.Fatalf("printed %d tools, the registry has %d", len(got.Params.Tools), len(decls))
			}
			for i, d := range decls {
				want, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				if g := compact(t, got.Params.Tools[i]); g != string(want) {
					t.Errorf("tool %d:\n got %s\nwant %s", i, g, want)
				}
			}
		})
	}
}

// What `devicectl tools` prints is, but for the indentation, the frame `devicectl run` sends a
// server first: the same members in the same order, the same bytes in every string.
func TestToolsMatchesTheWire(t *testing.T) {
	const mac = "AA-BB-CC-DD-EE-02"
	first := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		// The frames as they came off the line, unparsed; the line is held (unanswered) until the
		// device closes it.
		for {
			_, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			select {
			case first <- b:
			default:
			}
		}
	}))
	defer srv.Close()

	printed := runCLI(t.Context(), "", "tools", "--config", "/dev/null", "--mac", mac, "--hardware", "sim")
	if printed.code != 0 {
		t.Fatalf("tools: exit %d: %s", printed.code, printed.stderr)
	}

	d := startRun(t, "--config", "/dev/null", "--server", "ws"+strings.TrimPrefix(srv.URL, "http"),
		"--mac", mac, "--hardware", "sim", "--state-dir", t.TempDir(), "--log-level", "error")
	var frame []byte
	select {
	case frame = <-first:
	case <-d.exited:
		t.Fatalf("run ended before it registered: exit %d: %s", d.code, d.stderr.String())
	case <-standin.WaitCtx(t).Done():
		t.Fatal("run sent no frame")
	}
	if r := d.stop(); r.code != 0 {
		t.Errorf("run: exit %d: %s", r.code, r.stderr)
	}

	if got := compact(t, json.RawMessage(printed.stdout)); got != string(frame) {
		t.Errorf("tools printed, compacted:\n%s\nrun sent:\n%s", got, frame)
	}
	if !strings.HasPrefix(string(frame), `{"jsonrpc":"2.0","id":"reg-1","method":"mcp/registerTools","params":{"mac_addr":"`+mac+`","tools":[{`) {
		t.Errorf("run's first frame is not its registration of %s: %.120s", mac, frame)
	}
}

// A tool's timeout reaches the tool devicectl tools declares; an unknown name is a config error.
func TestToolTimeoutsNameTools(t *testing.T) {
	c := config.Defaults()
	c.Execution.ToolTimeouts = map[string]time.Duration{"get_device_status": 2 * time.Second}
	reg, err := devhw.NewRegistry(devhw.Sim(nil), c, buildVersion(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tool, _ := reg.Lookup("get_device_status"); tool.Timeout != 2*time.Second {
		t.Errorf("get_device_status timeout = %s, want 2s", tool.Timeout)
	}
	c.Execution.ToolTimeouts = map[string]time.Duration{"get_devise_status": time.Second}
	err = config.CheckToolTimeouts(c)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "execution.tool_timeouts.get_devise_status" || !strings.Contains(err.Error(), "no such tool") {
		t.Errorf("unknown tool: got %v, want a config error naming execution.tool_timeouts.get_devise_status", err)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
