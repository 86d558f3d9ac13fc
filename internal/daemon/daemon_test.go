package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// SIGHUP puts a new config in force without a restart: changed tools are registered again on
// the same line, a bad config is refused and the old one stays, and a new server is dialled.
func TestReload(t *testing.T) {
	srv := standin.Start(t, nil)
	cfg := standin.BaseConfig(t, srv.URL())
	d := startDaemon(t, cfg, nil)
	first := standin.NextRegistration(t, srv)
	if got := standin.Description(first, "amplify_volume"); !strings.HasPrefix(got, "Set") {
		t.Fatalf("English description %q", got)
	}

	// The language changes the tools' descriptions: registered again, on the same line.
	d.reload(t, strings.Replace(cfg, "language: en", "language: zh", 1), "configuration reloaded")
	again := standin.NextRegistration(t, srv)
	if again.RemoteAddr != first.RemoteAddr {
		t.Errorf("re-registered from %s, want the same line as before (%s)", again.RemoteAddr, first.RemoteAddr)
	}
	if got := standin.Description(again, "amplify_volume"); !strings.HasPrefix(got, "设置") {
		t.Errorf("after the reload the description is %q, want the Chinese one", got)
	}
	resp, err := again.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 30}`))
	if err != nil || resp.Error != nil || !strings.Contains(string(*resp.Result), "音量") {
		t.Errorf("call after the reload: %+v, %v; want a Chinese result", resp, err)
	}
	cfg = strings.Replace(cfg, "language: en", "language: zh", 1)

	// A bad value is refused, naming the key and line; the line and the tools stay.
	d.reload(t, strings.Replace(cfg, "ping_interval: 1s", "ping_interval: soon", 1), "reload refused")
	if log := d.stderr.String(); !strings.Contains(log, "connection.ping_interval") || !strings.Contains(log, "line 8") {
		t.Errorf("the refusal does not name the key and line:\n%s", log)
	}
	resp, err = again.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 31}`))
	if err != nil || resp.Error != nil {
		t.Errorf("call after a refused reload: %+v, %v", resp, err)
	}
	// So is a hook whose program does not exist.
	d.reload(t, cfg+"hooks:\n  registered: [/nonexistent/hook]\n", "reload refused")
	if log := d.stderr.String(); !strings.Contains(log, "hooks.registered") {
		t.Errorf("the refusal does not name hooks.registered:\n%s", log)
	}

	// Unchanged: nothing happens on the line.
	d.reload(t, cfg, "nothing changed")

	// A new server: the old line is closed, the new server gets the device.
	srv2 := standin.Start(t, nil)
	d.reload(t, strings.Replace(cfg, srv.URL(), srv2.URL(), 1), "configuration reloaded")
	moved := standin.NextRegistration(t, srv2)
	if moved.MAC != "AA-BB-CC-DD-EE-FF" {
		t.Errorf("registered %s at the new server", moved.MAC)
	}
	select {
	case <-again.Done():
	case <-standin.WaitCtx(t).Done():
		t.Error("the old server still has the device")
	}
	if left := srv.Devices(); len(left) != 0 {
		t.Errorf("the old server still lists %d devices after the move", len(left))
	}
}

// Hooks run on each event with the details in the environment, in order, and the last one
// (disconnected) still runs on the way out.
func TestHooksRunOnEvents(t *testing.T) {
	srv := standin.Start(t, nil)
	dir := t.TempDir()
	out := filepath.Join(dir, "events")
	hook := shscript.Write(t, dir, "hook.sh", fmt.Sprintf("printf '%%s|%%s|%%s|%%s|%%s|%%s\\n' \"$DEVICECTL_EVENT\" \"$DEVICECTL_MAC\" \"$DEVICECTL_TOOL\" \"$DEVICECTL_STATUS\" \"$DEVICECTL_REPLY\" \"$DEVICECTL_REASON\" >> %s\n", out))
	cfg := standin.BaseConfig(t, srv.URL()) + fmt.Sprintf(`hooks:
  connected: [%[1]s]
  registered: [%[1]s]
  disconnected: [%[1]s]
  tool_executed: [%[1]s]
  final_reply: [%[1]s]
`, hook)
	d := startDaemon(t, cfg, nil)
	dev := standin.NextRegistration(t, srv)
	if _, err := dev.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 20}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 101}`)); err != nil {
		t.Fatal(err) // refused before it ran: no hook
	}
	if err := dev.Say(standin.WaitCtx(t), "all done here"); err != nil {
		t.Fatal(err)
	}
	// The hooks runner logs each run once it is over (the log is at debug).
	ran := regexp.MustCompile(`msg="hook ran`)
	waitLines := func(n int) []string {
		d.stderr.WaitCount(t, ran, n)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	waitLines(4)
	d.stop(t)
	got := waitLines(5)
	want := []string{
		"connected|AA-BB-CC-DD-EE-FF||||",
		"registered|AA-BB-CC-DD-EE-FF||||",
		"tool_executed|AA-BB-CC-DD-EE-FF|amplify_volume|ok||",
		"final_reply|AA-BB-CC-DD-EE-FF|||all done here|",
		"disconnected|AA-BB-CC-DD-EE-FF||||closed by the device",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks ran:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The token never appears in the log or an error, even when a hostile server echoes it back and
// the log is at debug; the disconnected hook's reason is scrubbed too.
func TestTokenNeverLogged(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a"
	srv := standin.Start(t, &agenttest.Options{Register: func(_ context.Context, d *agenttest.Device) *jsonrpc2.Error {
		return &jsonrpc2.Error{Code: -32000, Message: "refused: " + strings.TrimPrefix(d.Header.Get("Authorization"), "Bearer ")}
	}})
	for _, format := range []string{"text", "json", "human"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			reasons := filepath.Join(dir, "reasons")
			hook := shscript.Write(t, dir, "hook.sh", "echo \"$DEVICECTL_REASON\" >> "+reasons+"\n")
			cfg := standin.BaseConfig(t, srv.URL()) + "  format: " + format + "\nhooks:\n  disconnected: [" + hook + "]\n"
			d := startDaemon(t, cfg, func(k string) string {
				if k == config.TokenEnv {
					return token
				}
				return ""
			})
			d.stderr.WaitFor(t, "refusal logged", func(s string) bool { return strings.Contains(s, "registration refused") })
			d.stop(t)
			log := d.stderr.String()
			if strings.Contains(log, token) {
				t.Errorf("the token is in the log:\n%s", log)
			}
			if !strings.Contains(log, "[redacted]") {
				t.Errorf("the echoed token was not replaced:\n%s", log)
			}
			b, err := os.ReadFile(reasons)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), token) || !strings.Contains(string(b), "[redacted]") {
				t.Errorf("the disconnected hook was told %q", b)
			}
		})
	}
}

// A token renewed in place (same file) is a change a reload acts on: the line is dialled again
// with the new one.
func TestReloadRenewedToken(t *testing.T) {
	srv := standin.Start(t, nil)
	tokenFile := standin.WriteFile(t, "token", "first-token-1234\n")
	cfg := strings.Replace(standin.BaseConfig(t, srv.URL()), "server:\n", "server:\n  token_file: "+tokenFile+"\n", 1)
	d := startDaemon(t, cfg, nil)
	if got := standin.NextRegistration(t, srv).Header.Get("Authorization"); got != "Bearer first-token-1234" {
		t.Fatalf("Authorization %q", got)
	}
	if err := os.WriteFile(tokenFile, []byte("second-token-5678\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.reload(t, cfg, "configuration reloaded")
	if got := standin.NextRegistration(t, srv).Header.Get("Authorization"); got != "Bearer second-token-5678" {
		t.Errorf("after the reload: Authorization %q, want the new token", got)
	}
	if log := d.stderr.String(); strings.Contains(log, "first-token") || strings.Contains(log, "second-token") {
		t.Errorf("a token is in the log:\n%s", log)
	}
}

// A reload that changes the hardware opens the new parts and serves the tools on them; one whose
// parts will not open is refused, and the parts in force before it are opened again.
func TestReloadHardware(t *testing.T) {
	srv := standin.Start(t, nil)
	dir := t.TempDir()
	shown := filepath.Join(dir, "shown")
	face := shscript.Write(t, dir, "face.sh", "echo \"$1\" >> "+shown+"\n")
	broken := shscript.Write(t, dir, "broken.sh", "echo no display >&2\nexit 3\n")
	sim := standin.BaseConfig(t, srv.URL())
	withFace := func(prog string) string {
		return strings.Replace(sim, "  mode: sim\n", "  mode: config\n  face:\n    driver: command\n    command: ["+prog+"]\n", 1)
	}
	lines := func() string {
		b, _ := os.ReadFile(shown)
		return strings.Join(strings.Fields(string(b)), " ")
	}
	d := startDaemon(t, sim, nil)
	dev := standin.NextRegistration(t, srv)

	d.reload(t, withFace(face), "configuration reloaded")
	resp, err := dev.Execute(standin.WaitCtx(t), "set_virtual_human_expression", json.RawMessage(`{"expression": "smile"}`))
	if err != nil || resp.Error != nil {
		t.Fatalf("smile on the new face: %+v, %v", resp, err)
	}
	if got := lines(); got != "idle smile" {
		t.Errorf("the face program showed %q, want \"idle smile\" (opened, then the call)", got)
	}

	d.reload(t, withFace(broken), "reload refused")
	if log := d.stderr.String(); !strings.Contains(log, "no display") {
		t.Errorf("the refusal does not say why the face would not open:\n%s", log)
	}
	resp, err = dev.Execute(standin.WaitCtx(t), "set_virtual_human_expression", json.RawMessage(`{"expression": "cry"}`))
	if err != nil || resp.Error != nil {
		t.Fatalf("cry after the refused reload: %+v, %v", resp, err)
	}
	// idle (halted for the swap), idle (reopened), cry.
	if got := lines(); got != "idle smile idle idle cry" {
		t.Errorf("the face program showed %q, want the old face back in force", got)
	}
}

// A Daemon runs once: a second Run is refused, and does not disturb the first.
func TestRunOnce(t *testing.T) {
	srv := standin.Start(t, nil)
	d := startDaemon(t, standin.BaseConfig(t, srv.URL()), nil)
	standin.NextRegistration(t, srv)
	if err := d.d.Run(t.Context()); !errors.Is(err, ErrRan) {
		t.Errorf("second Run = %v, want ErrRan", err)
	}
}

// What a reload changes decides what it redoes: a new session only for what the server sees or
// the line's and the calls' limits; the hardware only for its section (or the voice's language).
func TestReloadScope(t *testing.T) {
	for _, tc := range []struct {
		name              string
		edit              func(c *config.Config)
		session, hardware bool
		sections          string
	}{
		{"nothing", func(*config.Config) {}, false, false, ""},
		{"tool timeout", func(c *config.Config) {
			c.Execution.ToolTimeouts = map[string]time.Duration{"get_device_status": time.Second}
		}, false, false, "execution"},
		{"max_in_flight", func(c *config.Config) { c.Execution.MaxInFlight = 2 }, true, false, "execution"},
		{"max_queued", func(c *config.Config) { c.Execution.MaxQueued = 0 }, true, false, "execution"},
		{"server", func(c *config.Config) { c.Server.URL = "ws://elsewhere/" }, true, false, "server"},
		{"ping", func(c *config.Config) { c.Connection.PingInterval = time.Second }, true, false, "connection"},
		{"face", func(c *config.Config) { c.Hardware.Face.Driver = "command" }, false, true, "hardware"},
		{"language, no speech", func(c *config.Config) { c.Device.Language = "en" }, false, false, "device"},
		{"language, speech", func(c *config.Config) { c.Device.Language = "en"; c.Hardware.Speech.Driver = "command" }, false, true, "device, hardware"},
		{"log", func(c *config.Config) { c.Log.Level = slog.LevelDebug }, false, false, "log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oc, nc := config.Defaults(), config.Defaults()
			tc.edit(nc)
			old, p := &parts{cfg: oc}, &parts{cfg: nc}
			if got := needsNewSession(old, p); got != tc.session {
				t.Errorf("needsNewSession = %v, want %v", got, tc.session)
			}
			if got := hardwareChanged(oc, nc); got != tc.hardware {
				t.Errorf("hardwareChanged = %v, want %v", got, tc.hardware)
			}
			if got := strings.Join(changedSections(oc, nc), ", "); got != tc.sections {
				t.Errorf("changedSections = %q, want %q", got, tc.sections)
			}
		})
	}
}
