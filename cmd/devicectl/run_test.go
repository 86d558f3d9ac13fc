package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// run, as the acceptance harness starts it, against the stand-in server: it registers with the
// handshake headers, serves calls, renders messages, and stops with exit 0 when cancelled.
func TestRunAgainstStandIn(t *testing.T) {
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv(config.TokenEnv, "test-token")
	stateDir := t.TempDir()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- runCLI(ctx, "", "run", "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-FF", "--hardware", "sim",
			"--ping-interval", "1s", "--config", "/dev/null", "--state-dir", stateDir)
	}()

	d, err := srv.WaitDevice(standin.WaitCtx(t), "AA-BB-CC-DD-EE-FF")
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{
		"Authorization": "Bearer test-token",
		"Device-Id":     "AA-BB-CC-DD-EE-FF",
		"User-Agent":    "devicectl/" + buildVersion(),
	}
	for k, want := range headers {
		if got := d.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	id := d.Header.Get("Client-Id")
	if !uuidRE.MatchString(id) {
		t.Errorf("Client-Id %q is not a UUID v4", id)
	}
	if saved, err := os.ReadFile(filepath.Join(stateDir, "client-id")); err != nil || strings.TrimSpace(string(saved)) != id {
		t.Errorf("state dir holds %q, %v; want the Client-Id %q", saved, err, id)
	}
	if len(d.Tools) != 3 {
		t.Errorf("registered %d tools, want 3", len(d.Tools))
	}

	if err := d.Say(standin.WaitCtx(t), "hello from the server"); err != nil {
		t.Fatal(err)
	}
	// Messages are handled in order before the next request: once this answers, the reply is shown.
	resp, err := d.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 42}`))
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if resp.Error != nil || resp.Result == nil || json.Unmarshal(*resp.Result, &res) != nil || res["level"] != 42.0 {
		t.Errorf("amplify_volume: %+v, want a result with level 42", resp)
	}
	resp, err = d.Execute(standin.WaitCtx(t), "get_device_status", json.RawMessage(`{}`))
	if err != nil || resp.Error != nil || !strings.Contains(string(*resp.Result), "registered") {
		t.Errorf("get_device_status: %+v, %v; want a result saying registered", resp, err)
	}

	cancel() // what SIGINT/SIGTERM does in main
	r := <-done
	if r.code != 0 {
		t.Errorf("exit %d after cancel, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != "hello from the server\n" {
		t.Errorf("stdout %q, want the rendered reply", r.stdout)
	}
	if strings.Contains(r.stderr, "test-token") {
		t.Errorf("the token was logged:\n%s", r.stderr)
	}
	select {
	case <-d.Done():
	case <-standin.WaitCtx(t).Done():
		t.Error("the device's line is still open after run returned")
	}
}

// The real binary, started as the acceptance harness starts it, stops on SIGTERM with exit 0.
func TestRunSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := serveproc.Build(t)
	srv, err := agenttest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	// The harness's command line, plus a state directory of the test's own: run as root, the
	// default (/var/lib/devicectl) would leave a client-id on the machine.
	p := serveproc.RunWith(t, bin, append(os.Environ(), config.TokenEnv+"="), "run", "--server", srv.URL(), "--mac", "AA-BB-CC-DD-EE-FF",
		"--hardware", "sim", "--ping-interval", "1s", "--state-dir", t.TempDir())
	d, err := srv.WaitDevice(standin.WaitCtx(t), "AA-BB-CC-DD-EE-FF")
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.Err.String())
	}
	p.Terminate(t)
	select {
	case <-d.Done():
	case <-standin.WaitCtx(t).Done():
		t.Error("the server still sees the device after it exited")
	}
	if !strings.Contains(p.Err.String(), "msg=stopped") {
		t.Errorf("no graceful stop in the log:\n%s", p.Err.String())
	}
}

// The real binary catches SIGHUP (whose default would end it) and reloads: the changed tools are
// registered again on the same line, and the process goes on until SIGTERM.
func TestRunSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := serveproc.Build(t)
	srv := standin.Start(t, nil)
	cfg := standin.BaseConfig(t, srv.URL())
	configPath := standin.WriteFile(t, "devicectl.yaml", cfg)
	p := serveproc.RunWith(t, bin, append(os.Environ(), config.TokenEnv+"="), "run", "--config", configPath)
	first := standin.NextRegistration(t, srv)

	if err := os.WriteFile(configPath, []byte(strings.Replace(cfg, "language: en", "language: zh", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	again := standin.NextRegistration(t, srv)
	if again.RemoteAddr != first.RemoteAddr || !strings.HasPrefix(standin.Description(again, "amplify_volume"), "设置") {
		t.Errorf("after SIGHUP: registered from %s (first %s) with %q; want the Chinese tools on the same line",
			again.RemoteAddr, first.RemoteAddr, standin.Description(again, "amplify_volume"))
	}
	p.Terminate(t)
	if !strings.Contains(p.Err.String(), "configuration reloaded") {
		t.Errorf("no reload in the log:\n%s", p.Err.String())
	}
}
