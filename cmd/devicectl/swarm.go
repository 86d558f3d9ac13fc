//go:build !devicectl_omit_swarm

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
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
The prefix is written as a MAC is, its pairs joined all by '-', all by ':' or not at all (02-DC,
02:dc, 02dc). Give two swarms against one server different prefixes.

The first dials are spread evenly over --ramp (default 1ms a device, so -n 10000 takes 10s).
Every --interval a status line (redrawn in place on a terminal) gives the devices connected and
registered, the calls answered so far and, for the calls of that interval, the p50, p99 and max
time the devices took to handle them. AI messages are counted, not shown.

With --talk RATE the swarm is also a load generator: once every device has registered, it sends
the server RATE tasks a second in all (open loop), each saying --text to one of its devices
(metadata.mac, round-robin), over --route seed (POST /tasks/send) or a2a (A2A 1.0 SendMessage on
/a2a), on the --server's host over http or https. At most --callers tasks are in flight; a task
due while every caller is busy is not sent but counted as behind. The status line adds the
tasks completed, the rate of that interval, their p50, p90 and p99 time, and the failures by
kind (http 503, rpc -32602, task failed, timeout, connection); the summary has the totals and
quotes the latest failed task's answer. If
serve has agent.token_file, give its token with --talk-token-file or DEVICECTL_AGENT_TOKEN.

SIGINT or SIGTERM stops every device as run stops (running calls finish, close 1000), prints a
summary and exits 0. The devices' bearer token, if the server wants one, comes from
DEVICECTL_TOKEN. Each device holds an open file: a -n past the open-file limit (ulimit -n) is
refused.`

// agentTokenEnv holds serve's HTTP bearer token for --talk when --talk-token-file is not given.
const agentTokenEnv = "DEVICECTL_AGENT_TOKEN"

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
		talk           talkFlags
	)
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run many simulated devices against an agent server, for load tests",
		Long:  swarmLong,
		Example: `  devicectl swarm -n 1000 --server ws://agent.local:8080/device
  devicectl swarm -n 10000 --server ws://agent.local:8080/device --ramp 30s --mac-prefix 02-DC-01
  devicectl swarm -n 100 --server ws://127.0.0.1:8765/ --talk 2000 --callers 64 --route seed`,
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
			t, err := talk.check(c.Server.Servers()[0], os.Getenv, slog.New(slog.NewTextHandler(stderr, nil)))
			if err != nil {
				return err
			}
			s, err := swarm.FromConfig(c, plan, &swarm.ConfigIO{Out: cmd.OutOrStdout(), Err: stderr, Getenv: os.Getenv, Version: buildVersion(), Talk: t})
			if err != nil {
				return err
			}
			return s.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.IntVarP(&n, "count", "n", 0, "how many devices to run (required)")
	fs.StringVar(&prefix, "mac-prefix", swarm.DefaultMACPrefix, "first 1 to 5 bytes of every MAC, written as a MAC is (02-DC, 02:dc, 02dc), locally administered (first byte 02, 06, 0A, ...); the device number fills the rest")
	fs.DurationVar(&ramp, "ramp", 0, "spread the first dials evenly over this time (default 1ms a device; 0s dials all at once)")
	fs.DurationVar(&interval, "interval", time.Second, "time between status lines")
	fs.Float64Var(&talk.rate, "talk", 0, "send the server this many tasks a second in all, once every device has registered (0: none)")
	fs.StringVar(&talk.text, "text", swarm.DefaultTalkText, "what each task says")
	fs.StringVar(&talk.route, "route", string(swarm.RouteSeed), "the tasks' route: seed (POST /tasks/send) or a2a (A2A 1.0 SendMessage on /a2a)")
	fs.IntVar(&talk.callers, "callers", swarm.DefaultCallers, "tasks in flight at most; a task due while all are busy is counted behind")
	fs.StringVar(&talk.tokenFile, "talk-token-file", "", "file holding serve's HTTP bearer token (its agent.token_file) for the tasks; else $"+agentTokenEnv)
	config.BindFlags(fs, swarmDefaults(), "server", "servers", "language", "ping-interval", "log-level", "log-format")
	return cmd
}

// checkSwarm checks the flags that no setting checks; every error is the user's to fix (exit 2).
func checkSwarm(c *config.Config, n int, prefix string, ramp, interval time.Duration, limit swarm.LimitFunc) (swarm.Plan, error) {
	if err := c.Check(); err != nil {
		return swarm.Plan{}, err
	}
	if len(c.Server.Servers()) == 0 {
		return swarm.Plan{}, usageError{errors.New("--server is required: the agent server's ws:// or wss:// URL (or --servers, several separated by commas)")}
	}
	p, err := swarm.NewPlan(n, prefix, ramp, interval, limit)
	if err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// talkFlags are the load generator's flags.
type talkFlags struct {
	rate        float64
	text, route string
	callers     int
	tokenFile   string
}

// check makes the load generator from the flags: nil when --talk is 0. The token comes from
// --talk-token-file, else $DEVICECTL_AGENT_TOKEN, never from a flag's value.
// log gets the warning about a token file others can read.
func (f *talkFlags) check(server string, getenv func(string) string, log *slog.Logger) (*swarm.Talk, error) {
	if f.rate == 0 {
		return nil, nil
	}
	t, err := swarm.NewTalk(f.rate, f.text, f.route, f.callers, server)
	if err != nil {
		return nil, usageError{err}
	}
	if f.tokenFile != "" {
		if t.Token, err = config.ReadToken("--talk-token-file", f.tokenFile, log); err != nil {
			return nil, err
		}
	} else {
		t.Token = strings.TrimSpace(getenv(agentTokenEnv))
	}
	return &t, nil
}
