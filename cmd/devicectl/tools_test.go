package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	devhw "github.com/devicectl/devicectl/internal/hardware"
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
