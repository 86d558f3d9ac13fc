package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/daemon"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/tools"
)

func newToolsCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Print the mcp/registerTools request the device sends when it connects",
		Long: `tools prints, indented, the exact mcp/registerTools JSON-RPC request the device sends on
connecting: its MAC address and every tool's name, description, kinds and parameter schema.
It reads the config file like run does, so it shows what this device would declare, the tools
of its tool sets included (each read once now; one that does not answer is left out, with a
warning on stderr).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Resolve(configPath, cmd.Flags())
			if err != nil {
				return err
			}
			return printRegistration(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+config.DefaultPath+" when it exists)")
	config.BindFlags(cmd.Flags(), config.Defaults(), "mac", "interface", "language", "hardware")
	return cmd
}

func printRegistration(ctx context.Context, c *config.Config, w, stderr io.Writer) error {
	mac, err := config.DeviceMAC(c.Device)
	if err != nil {
		return err
	}
	// The declarations do not depend on the drivers, so the hardware is not touched: this is safe
	// beside the running service. (An optional part missing at start-up is left out by run.)
	reg, err := devhw.NewRegistry(devhw.Sim(nil), c, buildVersion(), nil)
	if err != nil {
		return err
	}
	log := config.NewLogger(c.Log, stderr)
	extra, err := daemon.LoadToolSets(ctx, c, buildVersion(), log)
	if err != nil {
		return err
	}
	daemon.AddToolSets(reg, extra, log)
	b, err := registrationRequest(mac, reg)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// registrationRequest is the device's first mcp/registerTools with reg's tools, as the device
// encodes it, indented for people: only whitespace is added, so compacted it is the frame a server
// receives.
func registrationRequest(mac string, reg *tools.Registry) ([]byte, error) {
	b, err := device.Registration(mac, reg.Declarations())
	if err != nil {
		return nil, fmt.Errorf("encoding the registration: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, fmt.Errorf("encoding the registration: %w", err)
	}
	return out.Bytes(), nil
}
