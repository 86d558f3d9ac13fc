package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/toolcall"
)

// call is device-side: the board binaries have it (unlike sim, whose console has a call
// command of its own).
func newCallCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON]",
		Short: "Run one of the device's tools, on the running daemon or on the configured parts",
		Long: `call runs one tool the way the device runs a server's mcp/tool/execute: the input is validated
against the tool's schema first, and the tool's timeout applies. JSON is the tool input and
defaults to {}.

While the daemon (devicectl run) runs, the call goes to it over its control socket
(control.socket; ` + config.DefaultControlSocket + ` with the packaged systemd unit, open to root and the
devicectl group; started by hand, in its state directory or $XDG_RUNTIME_DIR/devicectl) and runs
on the daemon's parts, in turn with the server's calls. With no daemon running, call says so on
stderr, opens the parts the config file describes (or simulated ones: --hardware sim), runs the
tool once and leaves the parts as the tool left them. Tools of tool sets need the daemon.

On success it prints the result and exits 0. On failure it prints the JSON-RPC error the device
would answer with (code, message, data.details) and exits 1.`,
		Example: `  devicectl call --config /etc/devicectl/devicectl.yaml amplify_volume '{"level": 50}'
  devicectl call set_virtual_human_expression '{"expression": "smile"}'
  devicectl call --hardware sim get_device_status`,
		Args: argsBetween(1, 2, "TOOL [JSON]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			input := "{}"
			if len(args) == 2 {
				input = args[1]
			}
			if !json.Valid([]byte(input)) {
				var v any
				return usageError{fmt.Errorf("the tool input is not JSON: %w", json.Unmarshal([]byte(input), &v))}
			}
			c, err := config.Resolve(configPath, cmd.Flags())
			if err != nil {
				return err
			}
			// The file's log level is the daemon's; call says only what went wrong unless asked.
			if !cmd.Flags().Changed("log-level") {
				c.Log.Level = max(c.Log.Level, slog.LevelWarn)
			}
			return runCall(cmd.Context(), c, os.Getenv, args[0], json.RawMessage(input), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+config.DefaultPath+" when it exists)")
	config.BindFlags(cmd.Flags(), callDefaults(), "state-dir", "language", "hardware", "log-level")
	return cmd
}

// callDefaults are the defaults call's flags show.
func callDefaults() *config.Config {
	c := config.Defaults()
	c.Log.Level = slog.LevelWarn
	return c
}

// runCall runs the call (see toolcall.Run) and prints the answer: the result, or the device's
// JSON-RPC error (exit 1).
func runCall(ctx context.Context, c *config.Config, getenv func(string) string, tool string, input json.RawMessage, stdout, stderr io.Writer) error {
	resp, err := toolcall.Run(ctx, &toolcall.Options{Config: c, Getenv: getenv, Version: buildVersion(), Logger: config.NewLogger(c.Log, stderr), Notice: stderr}, tool, input)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		if err := writeJSON(stdout, resp.Error); err != nil {
			return err
		}
		return &quietError{code: exitError}
	}
	var b bytes.Buffer
	if err := json.Indent(&b, resp.Result, "", "  "); err != nil {
		return fmt.Errorf("printing the result: %w", err)
	}
	b.WriteByte('\n')
	_, err = stdout.Write(b.Bytes())
	return err
}

// writeJSON writes v indented, without escaping <, > and & (people read this, not browsers).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
