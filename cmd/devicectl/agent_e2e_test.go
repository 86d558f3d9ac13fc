//go:build !devicectl_omit_serve

package main

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/seedtask"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// The whole loop, for real: an A2A message 把音量调到30 (a2a-go's client) goes to devicectl serve,
// whose rule planner calls amplify_volume on a devicectl run process (the real binary) whose
// speaker is the alsa backend on a PulseAudio null sink; the sink reads 30%, and the device prints
// the streamed reply. Then the same through seed 004's POST /tasks/send.
func TestAgentLoopOnPulse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts PulseAudio")
	}
	pulsetest.Need(t, "amixer", "alsa-utils")
	pactl := pulsetest.Need(t, "pactl", "pulseaudio-utils")
	// Built before pulsetest.Start moves HOME, which would give the build an empty module and
	// build cache of its own: minutes of downloads and compiles instead of seconds.
	bin := serveproc.Build(t)
	pulsetest.Start(t)
	const mac = "02-00-00-00-00-30"

	// serve, in this process, as the command runs it.
	srv := startServe(t, nil, "--listen", "127.0.0.1:0", "--state-dir", t.TempDir(), "--log-level", "error")
	wsURL, base, out := srv.url, srv.api(), srv.out

	// devicectl run, a process of its own, on the null sink.
	cfg := "server:\n  url: " + wsURL + "\ndevice:\n  mac: " + mac + "\n  state_dir: " + t.TempDir() +
		"\nhardware:\n  speaker: {driver: alsa, device: pulse}\nlog:\n  level: error\n"
	configPath := standin.WriteFile(t, "devicectl.yaml", cfg)
	dev := serveproc.Run(t, bin, configPath)
	out.waitFor(t, "+ "+mac+" registered 3 tools")

	sinkVolume := func() string {
		b, err := exec.Command(pactl, "get-sink-volume", pulsetest.Sink).CombinedOutput()
		if err != nil {
			t.Fatalf("pactl get-sink-volume: %v: %s", err, b)
		}
		return string(b)
	}
	// The planner is told "success" at once (agent.wait_for_control false): the device may set
	// the sink a moment after the reply, and only the sound server can tell when.
	waitSink := func(percent string) {
		t.Helper()
		var last string
		reached := false
		defer func() {
			if !reached {
				t.Logf("the sink last read %s\ndevice stderr:\n%s", last, dev.Err.String())
			}
		}()
		poll.Until(t, "sink volume "+percent, func() bool {
			last = sinkVolume()
			return strings.Contains(last, " "+percent+" ")
		})
		reached = true
	}
	// The device prints each reply on its stdout.
	waitPrinted := func(reply string, times int) {
		t.Helper()
		dev.Out.WaitUntil(t, "the reply on the device's stdout", dev.Exited, func(s string) bool {
			return strings.Count(s, reply+"\n") >= times
		})
	}

	// A2A 1.0, through a2a-go's client, from the agent card.
	card, err := agentcard.DefaultResolver.Resolve(standin.WaitCtx(t), base)
	if err != nil {
		t.Fatalf("resolving the agent card: %v", err)
	}
	client, err := a2aclient.NewFromCard(standin.WaitCtx(t), card, a2aclient.WithJSONRPCTransport(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("把音量调到30"))
	msg.Metadata = map[string]any{"mac": mac}
	res, err := client.SendMessage(standin.WaitCtx(t), &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("message/send answered %#v, want a completed task", res)
	}
	var reply string
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			reply += p.Text()
		}
	}
	if !strings.Contains(reply, "30") {
		t.Errorf("the reply %q does not say 30", reply)
	}
	waitSink("30%")
	waitPrinted(reply, 1)

	// Seed 004's route, in the seed's shape, after the sink was turned elsewhere.
	if b, err := exec.Command(pactl, "set-sink-volume", pulsetest.Sink, "63%").CombinedOutput(); err != nil {
		t.Fatalf("pactl: %v: %s", err, b)
	}
	seed, err := seedtask.Send(standin.WaitCtx(t), nil, base, seedtask.Request{ID: "task-e2e-1", SessionID: "session-e2e", Text: "把音量调到30",
		Metadata: map[string]string{"mac": mac}})
	if err != nil || seed.ID != "task-e2e-1" || seed.Status.State != "completed" {
		t.Fatalf("POST /tasks/send: %+v, %v", seed, err)
	}
	if len(seed.Artifacts) != 1 || len(seed.Artifacts[0].Parts) != 1 || seed.Artifacts[0].Parts[0].Text != reply {
		t.Errorf("POST /tasks/send: artifacts %+v, want the reply %q", seed.Artifacts, reply)
	}
	waitSink("30%")
	waitPrinted(reply, 2)
}
