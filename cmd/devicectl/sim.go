//go:build !devicectl_omit_sim

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/term"
)

// simMAC is the simulated device's MAC unless --mac says otherwise: the protocol's example.
const simMAC = "AA-BB-CC-DD-EE-FF"

const simHelp = `commands:
  call TOOL [JSON]  call one of the device's tools and print its JSON-RPC response as received
                    (JSON defaults to {}), e.g. call amplify_volume {"level": 80}
  say TEXT          send TEXT as an AI reply, a few chunks and a final; the device shows it
  tools             list the tools the device registered
  devices           list the registered devices
  help              this text
  quit              stop (so does end of input, Ctrl-D)
`

// simDefaults are the sim's settings before flags: a fixed MAC, so output is reproducible, and
// quieter logs, so they do not drown the console.
func simDefaults() *config.Config {
	c := config.Defaults()
	c.Device.MAC = simMAC
	c.Log.Level = slog.LevelWarn
	return c
}

func newSimCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run a stand-in agent server and a simulated device in one process, with a console",
		Long: `sim needs no configuration, no server and no hardware: it starts a stand-in agent server and a
device with simulated hardware (a speaker and a face) in one process, connected over loopback
exactly as a real device is to a real server, and gives you the server's side at a console.

In a terminal the console is interactive and shows the face and a volume bar as they change.
Otherwise it runs the lines of its input in order, printing each after the prompt, and exits 0
at the end.

` + simHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := simDefaults()
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			return runSim(cmd.Context(), c, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	config.BindFlags(cmd.Flags(), simDefaults(), "mac", "language", "show-thoughts", "color", "log-level", "log-format")
	return cmd
}

func runSim(ctx context.Context, c *config.Config, in io.Reader, stdout, stderr io.Writer) (err error) {
	out := console.NewSyncWriter(stdout)
	log := config.NewLogger(c.Log, stderr)
	interactive := term.IsTerminal(in)

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

	l, err := startLocal(ctx, c, c.Device.MAC, &devhw.SimHooks{OnVolume: pnl.SetVolume, OnExpression: pnl.SetFace}, render, log)
	if err != nil {
		return err
	}
	defer func() {
		pnl.Mute() // halting mutes the speaker; that is not worth a redraw on the way out
		err = errors.Join(err, l.Close())
	}()

	con := &console.Console{
		Server:      l.Server,
		Out:         out,
		Prompt:      "sim> ",
		Help:        simHelp,
		Interactive: interactive,
		AfterSay: func(ctx context.Context) error {
			select {
			case <-finals:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("the device did not show the reply: %w", ctx.Err())
			}
		},
	}
	if interactive {
		fmt.Fprintf(stderr, "devicectl sim: a simulated device (%s, %d tools) is registered with a stand-in agent server at %s\n"+
			"Type help for the commands; quit or Ctrl-D to leave.\n", l.Device.MAC, len(l.Device.Tools), l.Server.URL())
		pnl.Draw()
	}
	if err := con.Run(ctx, in); !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
