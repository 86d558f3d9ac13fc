//go:build !devicectl_omit_serve

package main

import (
	"errors"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/agent/mcpserver"
	"github.com/devicectl/devicectl/internal/config"
)

func newMCPCmd() *cobra.Command {
	var server, tokenFile string
	cmd := &cobra.Command{
		Use:   "mcp --server http://ADDR",
		Short: "Serve the devices of a running devicectl serve to an MCP host, over stdio",
		Long: `mcp is for MCP hosts (desktop assistants, IDEs, the MCP Inspector) that launch their servers as a
command: it speaks MCP on stdin and stdout, and passes everything on to the MCP server of the
devicectl serve at --server (its Streamable HTTP endpoint, http://ADDR/mcp). The tools are those
of the devices registered with serve, named DEVICE__TOOL (DEVICE is the device's alias from
agent.device_aliases, else its MAC), and serve's own tools; the host is told when they change.

Hosts that speak Streamable HTTP can use http://ADDR/mcp directly instead.

With agent.token_file set on serve, --token-file names a file holding the same token. mcp exits
when the host closes stdin, and with an error when serve ends the session (it stopped).`,
		Example: `  devicectl mcp --server http://127.0.0.1:8765
  devicectl mcp --server http://192.168.1.20:8765 --token-file ~/.config/devicectl/agent.token`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if server == "" {
				return usageError{errors.New("--server is required: the address of devicectl serve, e.g. --server http://127.0.0.1:8765")}
			}
			c := mcpDefaults()
			if err := config.ApplyFlags(cmd.Flags(), c); err != nil {
				return err
			}
			log := config.NewLogger(c.Log, cmd.ErrOrStderr()) // stdout is the host's
			token := ""
			if tokenFile != "" {
				var err error
				if token, err = config.ReadSecret("--token-file", tokenFile, log); err != nil {
					return err
				}
			}
			t := &mcp.IOTransport{Reader: readCloser(cmd.InOrStdin()), Writer: writeCloser{cmd.OutOrStdout()}}
			return mcpserver.Proxy(cmd.Context(), t, &mcpserver.ProxyOptions{URL: server, Token: token, Version: buildVersion(), Logger: log})
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the devicectl serve to pass the host on to: http://ADDR, or its MCP endpoint http://ADDR/mcp")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding serve's bearer token (its agent.token_file); empty: none")
	config.BindFlags(cmd.Flags(), mcpDefaults(), "log-level")
	return cmd
}

func mcpDefaults() *config.Config {
	c := config.Defaults()
	c.Log.Level = slog.LevelWarn
	return c
}

// readCloser keeps stdin closable (os.Stdin is), so that ending the session ends its read.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// writeCloser leaves stdout open when the session ends: it is the process's.
type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
