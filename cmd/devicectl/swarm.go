//go:build !devicectl_omit_swarm

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/swarm"
)

// `devicectl swarm` runs many simulated devices in one process (internal/swarm), each what `run
// --hardware sim` is: its own speaker, face, tool registry and device.Agent built by agentOptions.

const swarmLong = `swarm runs N simulated devices in one process against an agent server, for load tests. Each
device has its own MAC and simulated speaker and face, and runs the same session as devicectl
run: it registers its tools, answers the server's calls and reconnects with back-off.

MACs are --mac-prefix followed by the device's number, so they are locally administered and the
same on every run: with the default prefix, -n 3 gives 02-DC-00-00-00-00 to 02-DC-00-00-00-02.
Give two swarms against one server different prefixes.

The first dials are spread evenly over --ramp (default 1ms a device, so -n 10000 takes 10s).
Every --interval a status line (redrawn in place on a terminal) gives the devices connected and
registered, the calls answered so far and, for the calls of that interval, the p50, p99 and max
time the devices took to handle them. AI messages are counted, not shown.

SIGINT or SIGTERM stops every device as run stops (running calls finish, close 1000), prints a
summary and exits 0. The bearer token, if the server wants one, comes from DEVICECTL_TOKEN.
Each device holds an open file: a -n past the open-file limit (ulimit -n) is refused.`

func swarmDefaults() *config.Config {
	c := config.Defaults()
	// One warning per device (a server going away) would be thousands of lines: the status line
	// counts them instead, and shows the latest.
	c.Log.Level = slog.LevelError
	return c
}

func newSwarmCmd() *cobra.Command {
	var (
		n              int
		prefix         string
		ramp, interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run many simulated devices against an agent server, for load tests",
		Long:  swarmLong,
		Example: `  devicectl swarm -n 1000 --server ws://agent.local:8080/device
  devicectl swarm -n 10000 --server ws://agent.local:8080/device --ramp 30s --mac-prefix 02-DC-01`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("count") {
				// -n has no sensible default: a load test's size is the one thing to choose.
				return usageError{errors.New("-n is required: how many devices to run, e.g. -n 100")}
			}
			c := swarmDefaults()
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			if !cmd.Flags().Changed("ramp") {
				ramp = time.Duration(n) * swarm.RampPerDevice
			}
			plan, err := checkSwarm(c, n, prefix, ramp, interval, swarm.OpenFileLimit)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			if ports, ok := swarm.LocalPorts(); ok && n > ports {
				fmt.Fprintf(stderr, "devicectl swarm: warning: %d devices but %d local ports (net.ipv4.ip_local_port_range): dials to one server address past that fail; widen the range\n", n, ports)
			}
			s, err := swarm.FromConfig(c, plan, &swarm.ConfigIO{Out: cmd.OutOrStdout(), Err: stderr, Getenv: os.Getenv, Version: buildVersion()})
			if err != nil {
				return err
			}
			return s.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.IntVarP(&n, "count", "n", 0, "how many devices to run (required)")
	fs.StringVar(&prefix, "mac-prefix", swarm.DefaultMACPrefix, "first 1 to 5 bytes of every MAC, locally administered (first byte 02, 06, 0A, ...); the device number fills the rest")
	fs.DurationVar(&ramp, "ramp", 0, "spread the first dials evenly over this time (default 1ms a device; 0s dials all at once)")
	fs.DurationVar(&interval, "interval", time.Second, "time between status lines")
	config.BindFlags(fs, swarmDefaults(), "server", "language", "ping-interval", "log-level", "log-format")
	return cmd
}

// checkSwarm checks the flags that no setting checks; every error is the user's to fix (exit 2).
func checkSwarm(c *config.Config, n int, prefix string, ramp, interval time.Duration, limit swarm.LimitFunc) (swarm.Plan, error) {
	if c.Server.URL == "" {
		return swarm.Plan{}, usageError{errors.New("--server is required: the agent server's ws:// or wss:// URL")}
	}
	p, err := swarm.NewPlan(n, prefix, ramp, interval, limit)
	if err != nil {
		return p, usageError{err}
	}
	return p, nil
}
