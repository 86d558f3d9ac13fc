//go:build !devicectl_omit_serve

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	"github.com/devicectl/devicectl/internal/term"
)

// defaultListen keeps the stand-in server on this machine unless asked: it accepts any device
// and lets whoever types at the console drive it.
const defaultListen = "127.0.0.1:8765"

const serveHelp = `commands (MAC may be left out while one device is registered):
  devices                  list the registered devices
  wait [MAC]               wait until a device (that device) registers
  tools [MAC]              list a device's tools
  call [MAC] TOOL [JSON]   call a tool and print the device's JSON-RPC response as received
                           (JSON defaults to {}), e.g. call amplify_volume {"level": 80}
  say [MAC] TEXT           send TEXT as an AI reply, a few chunks and a final
  help                     this text
  quit                     stop
`

func newServeCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the stand-in agent server alone, for real devices to connect to",
		Long: `serve runs the stand-in agent server that sim uses, alone, so devices on the network can
register with it (point their server.url at ws://ADDR/). It prints devices as they register and
disconnect, and its console calls their tools and sends them AI messages.

It listens on ` + defaultListen + ` by default; use --listen 0.0.0.0:8765 to accept devices on the LAN.
It accepts every device and has no authentication: run it on networks you trust.

In a terminal, quit or Ctrl-D stops it. With input from a file or pipe it runs the lines in
order and then serves until interrupted (SIGINT/SIGTERM).

` + serveHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := serveDefaults()
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			return runServe(cmd.Context(), listen, c, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&listen, "listen", defaultListen, "address to listen on, host:port")
	config.BindFlags(cmd.Flags(), serveDefaults(), "ping-interval", "log-level", "log-format")
	return cmd
}

func serveDefaults() *config.Config {
	c := config.Defaults()
	c.Log.Level = slog.LevelWarn
	return c
}

func runServe(ctx context.Context, listen string, c *config.Config, in io.Reader, stdout, stderr io.Writer) error {
	log := config.NewLogger(c.Log, stderr)
	srv, err := agenttest.Listen(listen, &agenttest.Options{
		Logger:       log,
		ReadLimit:    c.Connection.ReadLimit,
		PingInterval: c.Connection.PingInterval,
		PingTimeout:  c.Connection.PingTimeout,
	})
	if err != nil {
		return err
	}
	defer srv.Close()

	interactive := term.IsTerminal(in)
	con := &console.Console{Server: srv, Out: console.NewSyncWriter(stdout), Prompt: "serve> ", Help: serveHelp, Interactive: interactive}
	fmt.Fprintf(stderr, "devicectl serve: listening at %s; type help for the commands\n", srv.URL())
	// Devices are shown as they come and go until serve returns, after the end of a script too.
	defer con.WatchEvents(ctx)()

	err = con.Run(ctx, in)
	if errors.Is(err, io.EOF) && !interactive {
		fmt.Fprintln(stderr, "devicectl serve: end of input; serving until interrupted")
		<-ctx.Done()
		return nil
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
