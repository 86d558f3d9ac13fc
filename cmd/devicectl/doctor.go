package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/doctor"
)

func newDoctorCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, the way to the server and each part of the hardware",
		Long: `doctor checks what run needs, one step at a time, and prints a table of OK, WARN and FAIL
with what to do about each problem: the config file, the MAC address and the token; the
server's name (DNS), its port (TCP), its certificate (TLS) and whether it accepts the device's
handshake and token; then each configured part of the hardware, opened and read back (the
speaker's volume, the face's expression, the speech program, the level the microphone hears
over a second and, for PulseAudio, whether its source is echo-cancelled); when the device
listens, whether the server takes voice (mcp/user/text). It does not register with the
server, and it leaves an ALSA or PulseAudio volume as it is. A display on a bus is
re-initialised and a MAX9744 set to its start-up volume, as run does, so for parts on I2C or
SPI stop the service first (two programs on one bus interleave). It exits 1 if a check fails;
warnings (a missing optional part, a token file others can read) do not.`,
		Example: `  devicectl doctor
  devicectl doctor --config ./devicectl.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Resolve(configPath, cmd.Flags())
			if err != nil {
				// The table's first row, then the usual exit 2 for a bad config.
				doctor.Print(cmd.OutOrStdout(), []doctor.Result{{Name: "config", Err: err, Remedy: "fix the key named above"}})
				return err
			}
			results := runDoctor(cmd.Context(), c, configPath, os.Getenv)
			if err := doctor.Print(cmd.OutOrStdout(), results); err != nil {
				return err
			}
			if doctor.Failed(results) {
				return &quietError{code: exitError}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+config.DefaultPath+" when it exists)")
	config.BindFlags(cmd.Flags(), config.Defaults(), "server", "mac", "interface", "hardware")
	return cmd
}

// runDoctor runs every check that can run, from c; a failed step skips the steps that need it.
func runDoctor(ctx context.Context, c *config.Config, configPath string, getenv func(string) string) []doctor.Result {
	log := slog.New(slog.DiscardHandler)
	where := configPath
	if where == "" {
		where = config.DefaultPath
		if _, err := os.Stat(where); err != nil {
			where = "none (defaults and flags)"
		}
	}
	results := []doctor.Result{{Name: "config", Detail: where}}

	mac, err := config.DeviceMAC(c.Device)
	results = append(results, doctor.Result{Name: "mac", Detail: mac, Err: err,
		Remedy: "set device.mac, or device.interface to the network interface whose address to use"})
	// Registering as the device would take a running daemon's line for a moment: not then.
	sock, running := daemonRunning(c, getenv)
	register := err == nil && !running

	token, err := config.LoadToken(c.Server, getenv, log)
	// The part programs opened below (a face, amixer) inherit the environment; the token is the
	// server's business, not theirs (run does the same).
	os.Unsetenv(config.TokenEnv)
	r := doctor.Result{Name: "token", Detail: tokenSource(c.Server, token), Err: err,
		Remedy: "make server.token_file readable by the service user (mode 0600), or unset it"}
	if fi, serr := os.Stat(c.Server.TokenFile); err == nil && serr == nil && config.LooseMode(fi.Mode()) {
		r.Warn = fmt.Sprintf("%s is readable by group or others (mode %s)", c.Server.TokenFile, fi.Mode().Perm())
		r.Remedy = "chmod 600 " + c.Server.TokenFile
	}
	results = append(results, r)

	if tlsConf, err := config.TLSConfig(c.Server, log); err != nil {
		results = append(results, doctor.Result{Name: "tls", Err: err, Remedy: "fix the TLS files in the server section"})
	} else {
		servers := c.Server.Servers()
		if len(servers) == 0 {
			servers = []string{""} // checked, to say it is not set
		}
		for _, u := range servers { // server.urls: each of them, in the order the device tries them
			results = append(results, doctor.CheckServer(ctx, &doctor.Server{
				URL:              u,
				MAC:              mac,
				Token:            token,
				UserAgent:        "devicectl/" + buildVersion(),
				TLS:              tlsConf,
				HandshakeTimeout: c.Connection.HandshakeTimeout,
				TokenRemedy:      "check server.token_file or $" + config.TokenEnv,
				Register:         register,
				ClientID:         keptClientID(c.Device, getenv),
				Voice:            c.Voice.Listen != config.ListenOff,
			})...)
		}
		if running {
			results = append(results, doctor.Result{Name: "register", Detail: "not tried: run is running (" + sock + " answers); its log says whether the server accepts it, and why not"})
		}
	}
	return append(results, doctor.Hardware(ctx, c.Hardware, c.Device.Language, log)...)
}

// daemonRunning reports whether run answers on one of its control sockets, and which.
func daemonRunning(c *config.Config, getenv func(string) string) (string, bool) {
	for _, path := range c.ControlSockets(getenv) {
		if conn, err := net.DialTimeout("unix", path, time.Second); err == nil {
			conn.Close()
			return path, true
		}
	}
	return "", false
}

// keptClientID is the Client-Id run keeps in its state directory, read without making one: a
// file the doctor made as another user could be unreadable to the service's.
func keptClientID(c config.DeviceConfig, getenv func(string) string) string {
	for _, dir := range config.StateDirs(c, getenv) {
		if b, err := os.ReadFile(filepath.Join(dir, "client-id")); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

func tokenSource(c config.ServerConfig, token string) string {
	switch {
	case c.TokenFile != "":
		return "from " + c.TokenFile
	case token != "":
		return "from $" + config.TokenEnv
	}
	return "none (no Authorization header is sent)"
}
