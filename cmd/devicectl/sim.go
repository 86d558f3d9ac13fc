//go:build !devicectl_omit_sim

package main

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

	"github.com/spf13/cobra"

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
	"github.com/devicectl/devicectl/voice"
)

// simMAC is the simulated device's MAC unless --mac says otherwise: the protocol's example.
const simMAC = "AA-BB-CC-DD-EE-FF"

// simWebAddr is where `sim --web` serves the page without an address: loopback, next to serve's
// default port so that both can run at once.
const simWebAddr = "127.0.0.1:8766"

const simHelp = `Anything that is not a command is said to the agent: e.g. 把音量调到30, 笑一个, look amazed,
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

// simDefaults are the sim's settings before flags: a fixed MAC, so output is reproducible, and
// quieter logs, so they do not drown the console. The agent waits for the device's answer to a
// control tool (agent.wait_for_control), so the face and the volume bar have changed before the
// reply is drawn and a transcript always reads in the same order; serve answers the planner at
// once, as seed 002 says.
func simDefaults() *config.Config {
	c := config.Defaults()
	c.Device.MAC = simMAC
	c.Log.Level = slog.LevelWarn
	c.Agent.WaitForControl = true
	return c
}

// simVoice is what --voice and --voice-input ask of the sim's device.
type simVoice struct {
	on   bool   // --voice: hear the default PulseAudio source, speak through the speakers
	file string // --voice-input: hear this WAV instead (and speak)
}

func newSimCmd() *cobra.Command {
	var webAddr, configPath string
	var sv simVoice
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the agent server and a simulated device in one process, and talk to them",
		Long: `sim needs no configuration, no server and no hardware: it starts the agent server (as serve
runs it) and a device with simulated hardware (a speaker and a face) in one process, connected
over loopback exactly as a real device is to a real server, and gives you a console to talk to
the agent (the built-in rule planner unless --planner llm) and to drive the device yourself.
The agent's memories last as long as the session.

In a terminal the console is interactive and shows the face and a volume bar as they change.
Otherwise it runs the lines of its input in order, printing each after the prompt, and exits 0
at the end (with --web it then serves the page until interrupted).

--web serves a web page showing the device's face, volume and uptime, a conversation box and the
log of tool calls, at http://` + simWebAddr + `/ or the loopback address given (--web=127.0.0.1:9000).

--voice makes the device hear and speak: it listens on the laptop's default PulseAudio source
(every utterance, as voice.listen vad), the agent server transcribes what it heard (agent.stt:
pocketsphinx with a grammar of what the planner understands, where installed), the console
shows what was heard, and the replies are spoken through the speakers (espeak-ng).
--voice-input FILE.wav plays a 16 kHz mono WAV in as the microphone instead, for demos and
tests (sox IN -r 16000 -c 1 -b 16 FILE.wav converts).

--config reads a config file's agent, llm, render and log sections (a search backend, a planner,
its model); the device stays simulated and the agent's database lasts the session, whatever the
file says about them.

` + simHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := simDefaults()
			if configPath != "" {
				if err := config.LoadFile(configPath, c); err != nil {
					return err
				}
			}
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			if cmd.Flags().Changed("web") {
				// The page is on the agent server's own address, which the sim's device dials
				// too; without a token CheckAgent keeps it on loopback.
				c.Agent.Web, c.Agent.Listen = true, webAddr
			}
			if err := c.CheckAgent(); err != nil {
				return err
			}
			return runSim(cmd.Context(), c, sv, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file whose agent, llm, render and log sections to use (none by default: sim needs no configuration)")
	config.BindFlags(cmd.Flags(), simDefaults(), "mac", "language", "planner", "llm-url", "llm-model", "searxng-url", "show-thoughts", "color", "log-level", "log-format")
	cmd.Flags().StringVar(&webAddr, "web", "", "serve the web page at http://ADDR/ (a loopback host:port; --web alone: "+simWebAddr+")")
	cmd.Flags().Lookup("web").NoOptDefVal = simWebAddr
	cmd.Flags().BoolVar(&sv.on, "voice", false, "hear the laptop's default PulseAudio source and speak the replies through its speakers")
	cmd.Flags().StringVar(&sv.file, "voice-input", "", "hear this WAV file (16 kHz mono 16-bit) as the microphone, and speak the replies")
	// The simulated device has no network interface to take a MAC from: run's text for --mac,
	// which falls back to device.interface, does not apply.
	cmd.Flags().Lookup("mac").Usage = "the simulated device's MAC address, sent in mcp/registerTools (device.mac)"
	return cmd
}

func runSim(ctx context.Context, c *config.Config, sv simVoice, in io.Reader, stdout, stderr io.Writer) (err error) {
	out := console.NewSyncWriter(stdout)
	log := config.NewLogger(c.Log, stderr)
	interactive := term.IsTerminal(in)

	// The agent's database lives as long as the session.
	dir, err := os.MkdirTemp("", "devicectl-sim-")
	if err != nil {
		return fmt.Errorf("a directory for the agent's database: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	srv, err := server.New(&server.Options{Config: c, DBPath: filepath.Join(dir, "agent.db"), Version: buildVersion(), Logger: log.With("component", "agent")})
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
	renderer := device.NewRenderer(out, stderr, &device.RenderOptions{
		ShowThoughts: c.Render.ShowThoughts,
		Color:        c.Render.ColorOn(stderr),
		Logger:       log,
	})
	var speech devhw.Speech // --voice: the replies are spoken
	if sv.on || sv.file != "" {
		if speech, err = devhw.OpenSpeech(config.SpeechConfig{Driver: "command", Sentences: true}, c.VoiceLang(), log); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, speech.Close()) }()
	}
	// The console waits for each reply to be shown before it reads on, so scripted output is
	// in a fixed order.
	finals := make(chan struct{}, 1)
	render := func(m device.AIMessage) {
		renderer.Render(m)
		if speech != nil {
			speech.Observe(m)
		}
		if m.Type == device.MessageFinal {
			select {
			case finals <- struct{}{}:
			default:
			}
		}
	}
	url := "ws://" + ln.Addr().String() + "/"
	dev, err := simdevice.Start(ctx, c, url, c.Device.MAC, buildVersion(), &devhw.SimHooks{OnVolume: pnl.SetVolume, OnExpression: pnl.SetFace}, render, log)
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
		Help:        simHelp,
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
		fmt.Fprintf(stderr, "devicectl sim: the web page is at http://%s/\n", ln.Addr())
	}
	if speech != nil {
		stop, err := simHear(ctx, c, sv, srv, dev, con, speech, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if interactive {
		fmt.Fprintf(stderr, "devicectl sim: a simulated device (%s, %d tools) is registered with the agent server at %s (planner %s).\n"+
			"Say something (把音量调到30, 笑一个, look amazed), or type help for the commands; quit or Ctrl-D to leave.\n", dev.MAC, dev.Tools, url, c.Agent.Planner)
		pnl.Draw()
	}
	if err := con.Run(ctx, in); !errors.Is(err, io.EOF) {
		return err
	}
	switch {
	case c.Agent.Web && !interactive:
		fmt.Fprintln(stderr, "devicectl sim: end of input; serving the web page until interrupted")
		<-ctx.Done()
	case speech != nil && !interactive:
		fmt.Fprintln(stderr, "devicectl sim: end of input; listening until interrupted")
		<-ctx.Done()
	}
	return nil
}

// simHear makes the sim's device hear (--voice, --voice-input) and the console show what the
// server heard. stop ends both.
func simHear(ctx context.Context, c *config.Config, sv simVoice, srv *server.Server, dev *simdevice.Device, con *console.Console, mouth devhw.Speech, log *slog.Logger) (stop func(), err error) {
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
	if sv.file != "" {
		mc, key = mic.Config{Driver: mic.DriverFile, File: sv.file}, "--voice-input"
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
