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

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/agentd"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/simdevice"
	"github.com/devicectl/devicectl/internal/term"
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

func newSimCmd() *cobra.Command {
	var webAddr, configPath string
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
			return runSim(cmd.Context(), c, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file whose agent, llm, render and log sections to use (none by default: sim needs no configuration)")
	config.BindFlags(cmd.Flags(), simDefaults(), "mac", "language", "planner", "llm-url", "llm-model", "searxng-url", "show-thoughts", "color", "log-level", "log-format")
	cmd.Flags().StringVar(&webAddr, "web", "", "serve the web page at http://ADDR/ (a loopback host:port; --web alone: "+simWebAddr+")")
	cmd.Flags().Lookup("web").NoOptDefVal = simWebAddr
	// The simulated device has no network interface to take a MAC from: run's text for --mac,
	// which falls back to device.interface, does not apply.
	cmd.Flags().Lookup("mac").Usage = "the simulated device's MAC address, sent in mcp/registerTools (device.mac)"
	return cmd
}

func runSim(ctx context.Context, c *config.Config, in io.Reader, stdout, stderr io.Writer) (err error) {
	out := console.NewSyncWriter(stdout)
	log := config.NewLogger(c.Log, stderr)
	interactive := term.IsTerminal(in)

	// The agent's database lives as long as the session.
	dir, err := os.MkdirTemp("", "devicectl-sim-")
	if err != nil {
		return fmt.Errorf("a directory for the agent's database: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	srv, err := agentd.New(&agentd.Options{Config: c, DBPath: filepath.Join(dir, "agent.db"), Version: buildVersion(), Logger: log.With("component", "agent")})
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
	// The console waits for each reply to be shown before it reads on, so scripted output is
	// in a fixed order.
	finals := make(chan struct{}, 1)
	render := func(m device.AIMessage) {
		renderer.Render(m)
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
	if interactive {
		fmt.Fprintf(stderr, "devicectl sim: a simulated device (%s, %d tools) is registered with the agent server at %s (planner %s).\n"+
			"Say something (把音量调到30, 笑一个, look amazed), or type help for the commands; quit or Ctrl-D to leave.\n", dev.MAC, dev.Tools, url, c.Agent.Planner)
		pnl.Draw()
	}
	if err := con.Run(ctx, in); !errors.Is(err, io.EOF) {
		return err
	}
	if c.Agent.Web && !interactive {
		fmt.Fprintln(stderr, "devicectl sim: end of input; serving the web page until interrupted")
		<-ctx.Done()
	}
	return nil
}
