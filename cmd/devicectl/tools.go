package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/daemon"
	devhw "github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// firstRegisterID is the id the agent gives its first mcp/registerTools request ("reg-1", then
// "reg-2" on the next connection, ...).
const firstRegisterID = "reg-1"

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

// registrationRequest encodes mcp/registerTools the way the agent does (a jsonrpc2.Request, so
// the same keys in the same order), indented for people.
func registrationRequest(mac string, reg *tools.Registry) ([]byte, error) {
	req := &jsonrpc2.Request{
		Method: protocol.MethodRegisterTools,
		ID:     jsonrpc2.ID{Str: firstRegisterID, IsString: true},
	}
	if err := req.SetParams(protocol.RegisterParams[[]tools.Declaration]{MAC: mac, Tools: reg.Declarations()}); err != nil {
		return nil, fmt.Errorf("encoding the registration: %w", err)
	}
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the registration: %w", err)
	}
	return b, nil
}
