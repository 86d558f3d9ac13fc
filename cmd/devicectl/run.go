package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/device"
)

func newRunCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Connect to the agent server and serve the device's tools (the daemon)",
		Long: `run is the device daemon: it dials the agent server, registers the device's tools with its MAC
address, runs the server's tool calls on the hardware and shows the server's AI messages, and
reconnects with back-off whenever the line is lost. SIGINT or SIGTERM stops it gracefully:
running calls may finish (execution.drain_timeout), the line is closed, and it exits 0.

Settings come from flags, over the config file, over the defaults. The bearer token is read from
server.token_file or the DEVICECTL_TOKEN environment variable, never from a flag.
A bad flag or config value exits 2 with a message naming it.`,
		Example: `  devicectl run --server ws://agent.local:8080/device --hardware sim
  devicectl run --config ./devicectl.yaml --log-level debug`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := resolveConfig(configPath, cmd.Flags())
			if err != nil {
				return err
			}
			return runDaemon(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr(), os.Getenv)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+defaultConfigPath+" when it exists)")
	bindFlags(cmd.Flags(), Defaults(),
		"server", "mac", "interface", "state-dir", "language", "hardware",
		"ping-interval", "show-thoughts", "color", "log-level", "log-format")
	return cmd
}

// runDaemon runs the agent until ctx is cancelled (a signal), then returns nil.
func runDaemon(ctx context.Context, c *Config, stdout, stderr io.Writer, getenv func(string) string) (err error) {
	if c.Server.URL == "" {
		return &ConfigError{Key: "server.url", Err: errors.New("not set; set it in the config file or with --server")}
	}
	log := newLogger(c.Log, stderr)
	mac, err := deviceMAC(c.Device)
	if err != nil {
		return err
	}
	token, err := loadToken(c.Server, getenv, log)
	if err != nil {
		return err
	}
	// The programs devicectl starts (a face, a speech command, amixer) inherit its environment;
	// the token is the server's business, not theirs.
	os.Unsetenv(tokenEnv)
	tlsConf, err := tlsConfig(c.Server, log)
	if err != nil {
		return err
	}
	clientID, err := clientID(c.Device, getenv, log)
	if err != nil {
		return err
	}
	hw, err := openHardware(ctx, c, log)
	if err != nil {
		return err
	}
	defer func() {
		if herr := hw.Halt(); herr != nil {
			err = errors.Join(err, herr)
		}
	}()
	state := newConnState()
	reg, err := newRegistry(hw, c, state.String)
	if err != nil {
		return err
	}

	renderer := device.NewRenderer(stdout, stderr, &device.RenderOptions{
		ShowThoughts: c.Render.ShowThoughts,
		Color:        colorOn(c.Render.Color, stderr),
		Logger:       log,
	})
	var sd *sdNotifier // set before Run, the first to call OnState
	agent, err := device.New(agentOptions(c, agentSettings{
		MAC:      mac,
		ClientID: clientID,
		Token:    token,
		TLS:      tlsConf,
		Registry: reg,
		Render:   speakingRender(renderer.Render, hw.Speech),
		Logger:   log,
		OnState: func(st device.State) {
			state.set(st)
			sd.state(st)
		},
	}))
	if err != nil {
		return fmt.Errorf("starting the agent: %w", err)
	}

	log.Info("starting", "version", buildVersion(), "server", c.Server.URL, "mac", mac,
		"hardware", hw.String(), "tools", toolNames(reg), "token", token != "")
	sdCtx, stopSystemd := context.WithCancel(ctx)
	sd = startSystemd(sdCtx, c.Server.URL, agent.Check, log)
	defer func() {
		stopSystemd()
		sd.wait()
	}()
	if err := agent.Run(ctx); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// clientID returns the installation's persistent Client-Id. A configured device.state_dir that
// cannot hold it is an error; when the directory is chosen automatically and none is writable, the
// device runs without a Client-Id (the protocol does not require one) and says so.
func clientID(c DeviceConfig, getenv func(string) string, log *slog.Logger) (string, error) {
	if c.StateDir != "" {
		id, err := device.LoadClientID(c.StateDir)
		if err != nil {
			return "", &ConfigError{Key: "device.state_dir", Err: err}
		}
		return id, nil
	}
	dirs := stateDirs(c, getenv)
	dir, err := writableDir(dirs)
	if err != nil {
		log.Warn("no state directory; connecting without a Client-Id", "tried", strings.Join(dirs, ", "), "err", err)
		return "", nil
	}
	id, err := device.LoadClientID(dir)
	if err != nil {
		log.Warn("cannot keep a Client-Id; connecting without one", "dir", dir, "err", err)
		return "", nil
	}
	return id, nil
}

// speakingRender shows each message and, when speech is on, hands it to speech too. Speech only
// queues, so a reply is never held up by the voice reading the one before.
func speakingRender(show func(device.AIMessage), speech speechOut) func(device.AIMessage) {
	if speech == nil {
		return show
	}
	return func(m device.AIMessage) {
		show(m)
		speech.Observe(m)
	}
}
