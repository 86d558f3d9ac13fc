package main

import (
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

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
running calls may finish (execution.drain_timeout), the line is closed, and it exits 0. SIGHUP
(systemctl reload devicectl) reads the config file again: a bad one is refused with a log line
and the old one stays in force; changed tools are registered again.

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
			// SIGHUP reloads; caught from here on, it no longer ends the process.
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			return runDaemon(cmd.Context(), c, daemonIO{
				stdout: cmd.OutOrStdout(),
				stderr: cmd.ErrOrStderr(),
				getenv: os.Getenv,
				load:   func() (*Config, error) { return resolveConfig(configPath, cmd.Flags()) },
				reload: hup,
			})
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+defaultConfigPath+" when it exists)")
	bindFlags(cmd.Flags(), Defaults(),
		"server", "mac", "interface", "state-dir", "language", "hardware",
		"ping-interval", "show-thoughts", "color", "log-level", "log-format")
	return cmd
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
