package voice_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/internal/testing/flite"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/speech"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/voice"
)

// sayScript records what the device was told to say: "begin TEXT" and "end TEXT" in $1; text
// with "hold" is held until killed (a long sentence being said).
const sayScript = `#!/bin/sh
text=$(cat)
printf 'begin %s\n' "$text" >> "$1"
case $text in *hold*) while :; do sleep 0.05; done ;; esac
printf 'end %s\n' "$text" >> "$1"
`

type said struct{ log string }

func (s said) text() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// wait polls the log the speech command writes (a program's output: there is nothing to wake on).
func (s said) wait(t *testing.T, want string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%q said", want), func() bool { return strings.Contains(s.text(), want) })
}

func newSpeech(t *testing.T) (*speech.Speaker, *speech.Narrator, said) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "say.sh")
	if err := os.WriteFile(script, []byte(sayScript), 0o755); err != nil {
		t.Fatal(err)
	}
	s := said{log: filepath.Join(dir, "said.log")}
	opts := &speech.Options{Command: []string{script, s.log}, Sentences: true}
	sp, err := speech.NewSpeaker(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp, speech.NewNarrator(sp, opts), s
}

type rig struct {
	srv    *agenttest.Server
	agent  *device.Agent
	dev    *agenttest.Device
	logs   *logbuf.Buffer
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs a device against an agenttest server taking voice as v says, rendering through
// render.
func start(t *testing.T, v *agenttest.Voice, render func(protocol.AIMessage)) *rig {
	t.Helper()
	srv, err := agenttest.Start(&agenttest.Options{Voice: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	reg := tools.NewRegistry()
	r := &rig{srv: srv, logs: &logbuf.Buffer{}, done: make(chan struct{})}
	r.agent, err = device.New(&device.Options{URL: srv.URL(), MAC: "AA-BB-CC-DD-EE-01", Registry: reg, Render: render,
		Logger: slog.New(slog.NewTextHandler(r.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { defer close(r.done); r.agent.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if r.dev, err = srv.WaitDevice(wctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.agent.WaitRegistered(wctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// Barge-in: the person speaks while the device says a reply. The speaking stops at once, the
// server is told (mcp/user/interrupt), the rest of that reply is not said, the utterance goes to
// the server as audio, and the reply to it is said.
func TestBargeIn(t *testing.T) {
	leakcheck.Check(t)
	command := flite.Samples(t, "set the volume to thirty")
	_, narrator, out := newSpeech(t)
	interrupted := make(chan struct{}, 1)
	heard := make(chan int, 1)
	r := start(t, &agenttest.Voice{
		Audio: func(ctx context.Context, d *agenttest.Device, p protocol.UserAudioParams) (protocol.UserResult, *jsonrpc2.Error) {
			heard <- len(p.Audio) / 2
			go d.Say(context.Background(), "Volume set to thirty.")
			return protocol.UserResult{Status: protocol.StatusAccepted, Text: "set the volume to thirty", TurnID: "t2"}, nil
		},
		Interrupt: func(*agenttest.Device) { interrupted <- struct{}{} },
	}, narrator.Observe)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.dev.Say(ctx, "Please hold on while I think about it. There is more to say."); err != nil {
		t.Fatal(err)
	}
	out.wait(t, "begin Please hold on while I think about it.")

	m := mic.NewSim(&mic.SimOptions{Fast: true})
	p := voice.NewPipeline(voice.PipelineOptions{Server: r.agent, Mouth: narrator, Lang: "en", Logger: slog.New(slog.NewTextHandler(r.logs, nil))})
	l, err := voice.Listen(m, &voice.ListenerOptions{OnSpeech: p.SpeechStarted})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Halt()
	go p.Run(ctx, l.Utterances())
	m.Play(command)

	select {
	case <-interrupted:
	case <-ctx.Done():
		t.Fatal("the server was not told of the interruption")
	}
	select {
	case n := <-heard:
		if d := time.Duration(n) * time.Second / 16000; d < time.Second {
			t.Errorf("the server got %v of audio; flite spoke %v", d, time.Duration(len(command))*time.Second/16000)
		}
	case <-ctx.Done():
		t.Fatal("the utterance never reached the server")
	}
	out.wait(t, "end Volume set to thirty.")
	got := out.text()
	if strings.Contains(got, "end Please hold on") || strings.Contains(got, "There is more") {
		t.Errorf("the interrupted reply went on:\n%s", got)
	}
	if !strings.Contains(r.logs.String(), `msg=heard component=voice text="set the volume to thirty"`) {
		t.Errorf("what was heard is not logged at info:\n%s", r.logs.String())
	}
}

// Speech to text on the device: the text goes as mcp/user/text, marked as heard; what was not
// understood is said to the person.
func TestPipelineDeviceSTT(t *testing.T) {
	leakcheck.Check(t)
	_, narrator, out := newSpeech(t)
	texts := make(chan protocol.UserTextParams, 2)
	r := start(t, &agenttest.Voice{
		Text: func(ctx context.Context, d *agenttest.Device, p protocol.UserTextParams) (protocol.UserResult, *jsonrpc2.Error) {
			texts <- p
			return protocol.UserResult{Status: protocol.StatusAccepted, TurnID: "t1"}, nil
		},
	}, narrator.Observe)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stt := &voice.CommandSTT{Argv: []string{"sh", "-c", `cat >/dev/null; echo "把音量调到三十"`}}
	p := voice.NewPipeline(voice.PipelineOptions{Server: r.agent, Transcriber: stt, Mouth: narrator, Lang: "zh"})
	p.Handle(ctx, voice.Utterance{Samples: make([]int16, 16000)})
	if got := <-texts; got != (protocol.UserTextParams{Text: "把音量调到三十", Lang: "zh", Source: "voice"}) {
		t.Errorf("the server got %+v", got)
	}

	empty := voice.NewPipeline(voice.PipelineOptions{Server: r.agent, Transcriber: &voice.CommandSTT{Argv: []string{"sh", "-c", "cat >/dev/null"}}, Mouth: narrator, Lang: "zh"})
	empty.Handle(ctx, voice.Utterance{Samples: make([]int16, 16000)})
	out.wait(t, "end 抱歉，我没听清。")
	select {
	case p := <-texts:
		t.Errorf("nothing understood, yet %+v was sent", p)
	default:
	}
}

// The server heard nothing it understood ({"status":"empty"}): the person is told.
func TestPipelineServerHeardNothing(t *testing.T) {
	leakcheck.Check(t)
	_, narrator, out := newSpeech(t)
	r := start(t, &agenttest.Voice{
		Audio: func(context.Context, *agenttest.Device, protocol.UserAudioParams) (protocol.UserResult, *jsonrpc2.Error) {
			return protocol.UserResult{Status: protocol.StatusEmpty}, nil
		},
	}, narrator.Observe)
	p := voice.NewPipeline(voice.PipelineOptions{Server: r.agent, Mouth: narrator, Lang: "en"})
	p.Handle(context.Background(), voice.Utterance{Samples: make([]int16, 8000)})
	out.wait(t, "end Sorry, I didn't catch that.")
}
