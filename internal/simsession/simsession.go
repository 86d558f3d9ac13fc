//go:build !devicectl_omit_serve || !devicectl_omit_sim

// Package simsession is `devicectl sim`'s composition: the agent server (agent/server) and a
// device agent on simulated hardware (internal/simdevice) in one process, the device dialling
// the server over loopback exactly as a board dials a real one, and a console
// (internal/console) to talk to the agent and to drive the device. The command turns its flags
// into Options; Run does the rest.
package simsession

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/server"
	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/mic"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/voice"
)

// MAC is the simulated device's unless the config says otherwise: the protocol's example.
const MAC = "AA-BB-CC-DD-EE-FF"

// Defaults are a session's settings before the command's flags: a fixed MAC, so output is
// reproducible, and quieter logs, so they do not drown the console. The agent waits for the
// device's answer to a control tool (agent.wait_for_control), so the face and the volume bar
// have changed before the reply is drawn and a transcript always reads in the same order; serve
// answers the planner at once, as seed 002 says.
func Defaults() *config.Config {
	c := config.Defaults()
	c.Device.MAC = MAC
	c.Log.Level = slog.LevelWarn
	c.Agent.WaitForControl = true
	return c
}

// Help is what the console says to help: what may be typed at its prompt.
const Help = `Anything that is not a command is said to the agent: e.g. 把音量调到30, 笑一个, look amazed,
你现在状态怎么样, 3*(4+5), 记住我喜欢科技. The face and the volume bar change as the device's tools
run, and the device shows the reply as it streams.

commands:
  call TOOL [JSON]  call one of the device's tools and print its JSON-RPC response as received
                    (JSON defaults to {}), e.g. call amplify_volume {"level": 80}
  say TEXT          announce TEXT: the device shows and speaks it now, with no turn
  tools             list the tools the device registered
  devices           list the registered devices
  help              this text
  quit              stop (so does end of input, Ctrl-D)
`

// Voice is what the simulated device hears and whether it speaks.
type Voice struct {
	On   bool   // hear the default PulseAudio source, speak through the speakers (sim --voice)
	File string // hear this WAV instead, and speak (sim --voice-input)
}

// Options are a session's: its configuration and its standard streams.
type Options struct {
	// Config is the agent's and the device's configuration, checked by the caller (CheckAgent).
	// The agent serves on agent.listen when agent.web is set, else on a loopback port of its own.
	Config  *config.Config
	Voice   Voice
	Version string // what the agent server and the device report as theirs
	In      io.Reader
	Out     io.Writer // the console, the panel and the device's replies
	Err     io.Writer // the log, the thoughts and what the session says about itself
}

// Run runs a session until its input ends (a scripted one; with agent.web or a Voice, until ctx
// is cancelled too), the console's quit, or ctx is cancelled. The agent's database lasts as long
// as the session. An error about the web page's address or the microphone names the flag that
// set it (--web, --voice, --voice-input).
func Run(ctx context.Context, o *Options) (err error) {
	c := o.Config
	out := console.NewSyncWriter(o.Out)
	log := config.NewLogger(c.Log, o.Err)
	interactive := term.IsTerminal(o.In)

	dir, err := os.MkdirTemp("", "devicectl-sim-")
	if err != nil {
		return fmt.Errorf("a directory for the agent's database: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	srv, err := server.New(&server.Options{Config: c, DBPath: filepath.Join(dir, "agent.db"), Version: o.Version, Logger: log.With("component", "agent")})
	if err != nil {
		return err
	}
	addr := "127.0.0.1:0" // only the sim's own device dials it
	if c.Agent.Web {
		addr = c.Agent.Listen
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if c.Agent.Web {
			err = &config.Error{Key: "--web", Err: err}
		}
		return errors.Join(err, srv.Close())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() { err = errors.Join(err, srv.Close(), <-served) }()

	pnl := console.NewPanel(out, sim.DefaultVolume, hal.Idle)
	renderer := device.NewRenderer(out, o.Err, &device.RenderOptions{
		ShowThoughts: c.Render.ShowThoughts,
		Color:        c.Render.ColorOn(o.Err),
		Logger:       log,
	})
	var speech devhw.Speech // with a Voice: the replies are spoken
	if o.Voice.On || o.Voice.File != "" {
		if speech, err = devhw.OpenSpeech(config.SpeechConfig{Driver: "command", Sentences: true}, c.VoiceLang(), log); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, speech.Close()) }()
	}
	// The console waits for each reply to be shown before it reads on, so scripted output is
	// in a fixed order.
	finals := make(chan struct{}, 1)
	render := func(m protocol.AIMessage) {
		renderer.Render(m)
		if speech != nil {
			speech.Observe(m)
		}
		if m.Type == protocol.MessageFinal {
			select {
			case finals <- struct{}{}:
			default:
			}
		}
	}
	url := "ws://" + ln.Addr().String() + "/"
	dev, err := simdevice.Start(ctx, c, url, c.Device.MAC, o.Version, &devhw.SimHooks{OnVolume: pnl.SetVolume, OnExpression: pnl.SetFace}, render, log)
	if err != nil {
		return err
	}
	defer func() {
		pnl.Mute() // halting mutes the speaker; that is not worth a redraw on the way out
		err = errors.Join(err, dev.Close())
	}()

	con := &console.Console{
		Server:      srv.Console(),
		Out:         out,
		Prompt:      "sim> ",
		Help:        Help,
		Interactive: interactive,
		SessionID:   "sim", // one conversation
		AfterReply: func(ctx context.Context) error {
			select {
			case <-finals:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("the device did not show the reply: %w", ctx.Err())
			}
		},
	}
	if c.Agent.Web {
		fmt.Fprintf(o.Err, "devicectl sim: the web page is at http://%s/\n", ln.Addr())
	}
	if speech != nil {
		stop, err := hear(ctx, c, o.Voice, srv, dev, con, speech, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if interactive {
		fmt.Fprintf(o.Err, "devicectl sim: a simulated device (%s, %d tools) is registered with the agent server at %s (planner %s).\n"+
			"Say something (把音量调到30, 笑一个, look amazed), or type help for the commands; quit or Ctrl-D to leave.\n", dev.MAC, dev.Tools, url, c.Agent.Planner)
		pnl.Draw()
	}
	if err := con.Run(ctx, o.In); !errors.Is(err, io.EOF) {
		return err
	}
	switch {
	case c.Agent.Web && !interactive:
		fmt.Fprintln(o.Err, "devicectl sim: end of input; serving the web page until interrupted")
		<-ctx.Done()
	case speech != nil && !interactive:
		fmt.Fprintln(o.Err, "devicectl sim: end of input; listening until interrupted")
		<-ctx.Done()
	}
	return nil
}

// hear makes the device hear (v) and the console show what the server heard. stop ends both.
func hear(ctx context.Context, c *config.Config, v Voice, srv *server.Server, dev *simdevice.Device, con *console.Console, mouth devhw.Speech, log *slog.Logger) (stop func(), err error) {
	events, unsubscribe := srv.Hub.Subscribe(0)
	var wg sync.WaitGroup
	wg.Go(func() {
		for e := range events {
			if e.Kind == hub.Heard {
				con.Heard(e.Device.MAC, e.Text, e.Source)
			}
		}
	})
	mc := mic.Config{Driver: mic.DriverPulse} // the default source
	key := "--voice"
	if v.File != "" {
		mc, key = mic.Config{Driver: mic.DriverFile, File: v.File}, "--voice-input"
	}
	m, _ := mouth.(voice.Mouth)
	if err := dev.Hear(ctx, &simdevice.HearOptions{Mic: mc, VAD: c.Voice.VAD, Mouth: m, Lang: c.VoiceLang(), Logger: log}); err != nil {
		unsubscribe()
		wg.Wait()
		return nil, &config.Error{Key: key, Err: err}
	}
	return func() {
		unsubscribe()
		wg.Wait()
	}, nil
}
