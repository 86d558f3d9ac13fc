package toolcall

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
)

// With no daemon, the call runs on the configured (here simulated) parts, and the device's
// refusal of a bad input comes back as its JSON-RPC error, not as a failure to call.
func TestRunLocal(t *testing.T) {
	c := config.Defaults()
	c.Hardware.Mode = "sim"
	c.Control.Socket = filepath.Join(t.TempDir(), "control.sock") // nothing listens there
	var notice strings.Builder
	o := &Options{Config: c, Version: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Notice: &notice}
	resp, err := Run(context.Background(), o, "amplify_volume", json.RawMessage(`{"level":40}`))
	if err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), `"level":40`) {
		t.Fatalf("amplify_volume 40: %+v, %v; want a result with level 40", resp, err)
	}
	// Whoever expected the running daemon is told that this was not it, and where call looked.
	if got := notice.String(); !strings.Contains(got, "no running daemon answered") || !strings.Contains(got, c.Control.Socket) || !strings.Contains(got, "simulated parts of its own") {
		t.Errorf("the notice of a call without the daemon is %q", got)
	}
	resp, err = Run(context.Background(), o, "amplify_volume", json.RawMessage(`{"level":400}`))
	if err != nil || resp.Error == nil || resp.Error.Code != -32602 {
		t.Fatalf("amplify_volume 400: %+v, %v; want the device's -32602", resp, err)
	}
}
