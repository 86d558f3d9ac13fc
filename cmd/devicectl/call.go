//go:build !devicectl_omit_sim

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
)

func newCallCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON]",
		Short: "Run one of the device's tools on simulated hardware and print the result",
		Long: `call runs one tool the way the device runs a server's mcp/tool/execute, on simulated hardware
and with no server to set up: the input is validated against the tool's schema first, and the
tool's timeout applies. JSON is the tool input and defaults to {}.

On success it prints the result and exits 0. On failure it prints the JSON-RPC error the device
would answer with (code, message, data.details) and exits 1.`,
		Example: `  devicectl call amplify_volume '{"level": 80}'
  devicectl call set_virtual_human_expression '{"expression": "smile"}'
  devicectl call get_device_status`,
		Args: argsBetween(1, 2, "TOOL [JSON]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := callDefaults()
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			input := "{}"
			if len(args) == 2 {
				input = args[1]
			}
			return runCall(cmd.Context(), c, args[0], input, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	config.BindFlags(cmd.Flags(), callDefaults(), "language", "log-level")
	return cmd
}

func callDefaults() *config.Config {
	c := config.Defaults()
	c.Log.Level = slog.LevelWarn
	return c
}

// runCall runs the call through a device agent and a stand-in server in this process, so the
// answer is the device's own: same validation, error codes and timeouts as on the wire.
func runCall(ctx context.Context, c *config.Config, tool, input string, stdout, stderr io.Writer) (err error) {
	if !json.Valid([]byte(input)) {
		var v any
		return usageError{fmt.Errorf("the tool input is not JSON: %w", json.Unmarshal([]byte(input), &v))}
	}
	log := config.NewLogger(c.Log, stderr)
	l, err := startLocal(ctx, c, simMAC, log)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := l.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	resp, err := l.Device.Execute(ctx, tool, json.RawMessage(input))
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
	if resp.Result != nil {
		if err := json.Indent(&b, *resp.Result, "", "  "); err != nil {
			return fmt.Errorf("printing the result: %w", err)
		}
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
