//go:build !devicectl_omit_serve

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devicectl/devicectl/agent/server"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/console"
	"github.com/devicectl/devicectl/internal/gctune"
	"github.com/devicectl/devicectl/internal/logging"
	"github.com/devicectl/devicectl/internal/term"
)

const serveHelp = `Anything that is not a command is said to the agent, on the only device or the one whose MAC
starts the line (e.g. 把音量调到30, or AA-BB-CC-DD-EE-FF turn it down to 20); the tool calls and
the streamed reply are shown.

commands (MAC may be left out while one device is registered):
  devices                  list the registered devices
  wait [MAC]               wait until a device (that device) registers
  tools [MAC]              list a device's tools
  call [MAC] TOOL [JSON]   call a device's tool and print its JSON-RPC response as received
                           (JSON defaults to {}), e.g. call amplify_volume {"level": 80}
  say [MAC] TEXT           announce TEXT: the device shows and speaks it now, with no turn
  forget MAC               free a MAC bound to the Client-Id of the device that registered it
                           first, for a replacement device (also POST /devices/MAC/forget)
  help                     this text
  quit                     stop
`

func newServeCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the agent server: devices connect to it, people and other agents talk to it",
		Long: `serve runs the agent server. Devices register with it over WebSocket (point their server.url at
ws://ADDR/; any path works); people talk to it at its console, and other agents over A2A
(agent card at http://ADDR/.well-known/agent-card.json) or seed 004's routes (POST
/tasks/send, POST /tasks/send/stream, GET /tasks/{id}, GET /agent-card). A turn is planned by
the built-in rule planner (agent.planner rules, the default: no network, no model) or an
OpenAI-compatible endpoint (agent.planner llm). The agent's own tools (calculate, search_web,
memory, ...) run in the server; memories, tasks, reminders and device bindings are kept in
agent.db in the state directory, or in the PostgreSQL database agent.store names, which several
serve processes may share (docs/storage.md).

It listens on ` + config.DefaultAgentListen + ` by default, open to anyone on this machine. Beyond loopback
(--listen 0.0.0.0:8765) it refuses to start without agent.token_file, the bearer token HTTP
clients must send, and without agent.device_tokens_file, the tokens devices must present
(agent.devices_open: true lets any device register instead). A MAC is bound to the Client-Id
of the device that registered it first; forget MAC at the console, or POST
/devices/MAC/forget, frees it for a replacement board.

--web (agent.web) serves a web page at http://ADDR/: each device's face, volume and uptime, a
conversation box and the log of tool calls. It asks for agent.token_file's token once, when set.

It reads a config file only when --config names one (the agent and llm sections; see
configs/devicectl.yaml); flags override it.

In a terminal, quit or Ctrl-D stops it. With input from a file or pipe it runs the lines in
order and then serves until interrupted (SIGINT/SIGTERM).

` + serveHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := serveConfig(configPath, cmd.Flags())
			if err != nil {
				return err
			}
			gctune.Start()
			return runServe(cmd.Context(), c, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file with the agent and llm sections (none by default)")
	config.BindFlags(cmd.Flags(), serveDefaults(), "listen", "planner", "turn-timeout", "llm-url", "llm-model", "searxng-url", "state-dir", "ping-interval", "web", "log-level", "log-format")
	return cmd
}

func serveDefaults() *config.Config {
	c := config.Defaults()
	c.Log.Level = slog.LevelWarn
	return c
}

// serveConfig is serve's configuration: its defaults, the file when one is named, the flags.
func serveConfig(path string, fs *pflag.FlagSet) (*config.Config, error) {
	c := serveDefaults()
	if path != "" {
		if err := config.LoadFile(path, c); err != nil {
			return nil, err
		}
	}
	if err := config.ApplyFlags(fs, c); err != nil {
		return nil, err
	}
	if err := c.CheckAgent(); err != nil {
		return nil, err
	}
	return c, nil
}

func runServe(ctx context.Context, c *config.Config, in io.Reader, stdout, stderr io.Writer) (err error) {
	// A refused device or request is a warning each time: a flood is counted, not written (see
	// logging.Repeats). Closed last, so its summaries follow the server's last lines.
	repeats := logging.NewRepeats(nil)
	defer repeats.Close()
	log := slog.New(repeats.Handler(config.NewLogger(c.Log, stderr).Handler()))
	srv, err := server.New(&server.Options{Config: c, Version: buildVersion(), Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Agent.Listen)
	if err != nil {
		return errors.Join(&config.Error{Key: "agent.listen", Err: err}, srv.Close())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() { err = errors.Join(err, srv.Close(), <-served) }()

	interactive := term.IsTerminal(in)
	con := &console.Console{Server: srv.Console(), Out: console.NewSyncWriter(stdout), Prompt: "serve> ", Help: serveHelp, Interactive: interactive, ShowReply: true}
	addr := ln.Addr().String()
	db := ""
	if srv.DBPath != "" {
		db = ", " + srv.DBPath
	}
	if srv.Cluster != nil {
		db += ", node " + srv.Cluster.Node() + " of cluster " + srv.Cluster.Name()
	}
	fmt.Fprintf(stderr, "devicectl serve: listening at ws://%s/; HTTP at http://%s/ (planner %s%s); type help for the commands\n",
		addr, addr, c.Agent.Planner, db)
	if srv.Web != nil {
		fmt.Fprintf(stderr, "devicectl serve: the web page is at http://%s/\n", addr)
	}
	// Devices are shown as they come and go until serve returns, after the end of a script too.
	defer srv.WatchDevices(ctx, con)()

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
