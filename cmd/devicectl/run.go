package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/daemon"
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
			load := func() (*config.Config, error) { return config.Resolve(configPath, cmd.Flags()) }
			c, err := load()
			if err != nil {
				return err
			}
			d := daemon.New(c, &daemon.Options{
				Stdout:  cmd.OutOrStdout(),
				Stderr:  cmd.ErrOrStderr(),
				Load:    load,
				Version: buildVersion(),
			})
			return runWithReloads(cmd.Context(), d)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+config.DefaultPath+" when it exists)")
	config.BindFlags(cmd.Flags(), config.Defaults(),
		"server", "servers", "mac", "interface", "state-dir", "language", "hardware", "sim-latency",
		"ping-interval", "show-thoughts", "color", "log-level", "log-format")
	return cmd
}

// runWithReloads runs d until ctx ends, turning each SIGHUP into a reload. Caught from here on,
// SIGHUP no longer ends the process.
func runWithReloads(ctx context.Context, d *daemon.Daemon) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		for {
			select {
			case <-hup:
				d.Reload()
			case <-ctx.Done():
				return
			}
		}
	})
	return d.Run(ctx)
}
