//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

const voiceMAC = "AA-BB-CC-DD-EE-51"

// chanWriter hands each write to a channel: what the console printed, without a data race.
type chanWriter chan string

func (w chanWriter) Write(p []byte) (int, error) { w <- string(p); return len(p), nil }

// callLog records a device's calls.
type callLog struct {
	mu    sync.Mutex
	calls []string
	ch    chan string
}

func (l *callLog) handle(ctx context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
	c := tool + " " + string(input)
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	l.ch <- c
	return hubtest.Echo(ctx, tool, input)
}

func voiceDevice(t *testing.T, addr string) (*hubtest.Device, *callLog) {
	t.Helper()
	calls := &callLog{ch: make(chan string, 16)}
	d, err := hubtest.Dial(waitCtx(t), "ws://"+addr+"/", &hubtest.Options{Handle: calls.handle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Register(waitCtx(t), voiceMAC, hubtest.Tools); err != nil {
		t.Fatal(err)
	}
	return d, calls
}

func result(t *testing.T, m *map[string]string, raw *json.RawMessage) {
	t.Helper()
	if err := json.Unmarshal(*raw, m); err != nil {
		t.Fatal(err)
	}
}

func deviceFinal(t *testing.T, d *hubtest.Device) string {
	t.Helper()
	ctx := waitCtx(t)
	for {
		select {
		case m := <-d.Messages():
			if m.Type == "final" {
				return m.Content
			}
		case <-ctx.Done():
			t.Fatal("no final reply")
		}
	}
}

// TestVoiceTurn: audio from a device is transcribed by the configured command, the turn runs
// with the rule planner and calls the device's tool, the reply comes back, and the serve
// console shows what was heard. Typed text runs in the same session: "forget that" works.
func TestVoiceTurn(t *testing.T) {
	leakcheck.Check(t)
	c := testConfig(t)
	c.Agent.STT = config.STTConfig{Engine: config.STTEngineCommand, Command: []string{"sh", "-c", "cat >/dev/null; echo set the volume to thirty"}}
	srv, addr := startServer(t, c)
	lines := make(chanWriter, 16)
	con := &console.Console{Server: srv.Console(), Out: console.NewSyncWriter(lines), Prompt: "serve> "}
	stop := srv.WatchDevices(context.Background(), con)
	defer stop()
	d, calls := voiceDevice(t, addr)

	m, err := d.Request(waitCtx(t), "mcp/user/audio", map[string]any{"format": "pcm_s16le", "rate": 16000, "channels": 1, "audio": base64.StdEncoding.EncodeToString(make([]byte, 3200)), "lang": "en"})
	if err != nil || m.Error != nil {
		t.Fatalf("mcp/user/audio: %v %+v", err, m)
	}
	var res map[string]string
	result(t, &res, &m.Result)
	if res["status"] != "accepted" || res["text"] != "set the volume to thirty" || res["turn_id"] == "" {
		t.Errorf("answer %v", res)
	}
	if got := <-calls.ch; got != `amplify_volume {"level":30}` {
		t.Errorf("the turn called %s", got)
	}
	if got := deviceFinal(t, d); !strings.Contains(got, "30") {
		t.Errorf("reply %q", got)
	}
	for line := range lines {
		if strings.Contains(line, voiceMAC+" heard: set the volume to thirty") {
			break
		}
	}

	// Text, in the device's one session: what the first turn remembered, the second forgets.
	for _, say := range []string{"remember that I like tea", "forget that"} {
		m, err = d.Request(waitCtx(t), "mcp/user/text", map[string]string{"text": say, "lang": "en"})
		if err != nil || m.Error != nil {
			t.Fatalf("mcp/user/text: %v %+v", err, m)
		}
		reply := deviceFinal(t, d)
		if say == "forget that" && !strings.Contains(strings.ToLower(reply), "tea") {
			t.Errorf("forget that, in the device's session: %q; want it to forget the tea", reply)
		}
	}
}

// TestVoiceNoEngine: with no engine, audio is answered -32000 saying how to configure one.
func TestVoiceNoEngine(t *testing.T) {
	c := testConfig(t)
	c.Agent.STT.Engine = config.STTEngineNone
	_, addr := startServer(t, c)
	d, _ := voiceDevice(t, addr)
	m, err := d.Request(waitCtx(t), "mcp/user/audio", map[string]any{"format": "pcm_s16le", "rate": 16000, "channels": 1, "audio": base64.StdEncoding.EncodeToString(make([]byte, 320))})
	if err != nil || m.Error == nil || m.Error.Code != -32000 || m.Error.Data == nil ||
		!strings.Contains(string(*m.Error.Data), "no speech-to-text engine is configured (agent.stt.engine is none)") {
		t.Fatalf("answer %+v, %v", m, err)
	}
}

// TestVoiceAuto: auto is pocketsphinx where it is installed, else none saying so.
func TestVoiceAuto(t *testing.T) {
	e, err := newSTT(testConfig(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, lookErr := exec.LookPath("pocketsphinx_continuous")
	if got, want := e.String(), "command pocketsphinx_continuous"; lookErr == nil && got != want {
		t.Errorf("auto with pocketsphinx installed: %s; want %s", got, want)
	} else if lookErr != nil && got != "none" {
		t.Errorf("auto without pocketsphinx: %s; want none", got)
	}
}
