package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/devicectl/devicectl/transport"
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
speaker's volume, the face's expression, the speech program). It does not register with the
server, and it leaves an ALSA or PulseAudio volume as it is. A display on a bus is
re-initialised and a MAX9744 set to its start-up volume, as run does, so for parts on I2C or
SPI stop the service first (two programs on one bus interleave). It exits 1 if a check fails;
warnings (a missing optional part, a token file others can read) do not.`,
		Example: `  devicectl doctor
  devicectl doctor --config ./devicectl.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := resolveConfig(configPath, cmd.Flags())
			if err != nil {
				// The table's first row, then the usual exit 2 for a bad config.
				printChecks(cmd.OutOrStdout(), []checkResult{{Name: "config", Err: err, Remedy: "fix the key named above"}})
				return err
			}
			results := runDoctor(cmd.Context(), c, configPath, os.Getenv)
			printChecks(cmd.OutOrStdout(), results)
			for _, r := range results {
				if r.Err != nil {
					return &quietError{code: exitError}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (default "+defaultConfigPath+" when it exists)")
	bindFlags(cmd.Flags(), Defaults(), "server", "mac", "interface", "hardware")
	return cmd
}

// checkResult is one row of the doctor's table.
type checkResult struct {
	Name   string
	Detail string // what was found, on success
	Warn   string // on success: what works but should be fixed (the row says WARN)
	Err    error  // what failed
	Remedy string // what to do about Err, or about Warn
}

func printChecks(w io.Writer, results []checkResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range results {
		if r.Err == nil && r.Warn == "" {
			fmt.Fprintf(tw, "%s\tOK\t%s\n", r.Name, r.Detail)
			continue
		}
		if r.Err == nil {
			fmt.Fprintf(tw, "%s\tWARN\t%s\n", r.Name, r.Warn)
			if r.Remedy != "" {
				fmt.Fprintf(tw, "\t\t-> %s\n", r.Remedy)
			}
			continue
		}
		fmt.Fprintf(tw, "%s\tFAIL\t%v\n", r.Name, r.Err)
		if r.Remedy != "" {
			fmt.Fprintf(tw, "\t\t-> %s\n", r.Remedy)
		}
	}
	tw.Flush()
}

// runDoctor runs every check that can run; a failed step skips the steps that need it.
func runDoctor(ctx context.Context, c *Config, configPath string, getenv func(string) string) []checkResult {
	log := slog.New(slog.DiscardHandler)
	where := configPath
	if where == "" {
		where = defaultConfigPath
		if _, err := os.Stat(where); err != nil {
			where = "none (defaults and flags)"
		}
	}
	results := []checkResult{{Name: "config", Detail: where}}
	add := func(r checkResult) bool {
		results = append(results, r)
		return r.Err == nil
	}

	mac, err := deviceMAC(c.Device)
	add(checkResult{Name: "mac", Detail: mac, Err: err, Remedy: "set device.mac, or device.interface to the network interface whose address to use"})

	token, err := loadToken(c.Server, getenv, log)
	// The part programs opened below (a face, amixer) inherit the environment; the token is the
	// server's business, not theirs (run does the same).
	os.Unsetenv(tokenEnv)
	r := checkResult{Name: "token", Detail: tokenSource(c.Server, token), Err: err, Remedy: "make server.token_file readable by the service user (mode 0600), or unset it"}
	if fi, serr := os.Stat(c.Server.TokenFile); err == nil && serr == nil && looseMode(fi.Mode()) {
		r.Warn = fmt.Sprintf("%s is readable by group or others (mode %s)", c.Server.TokenFile, fi.Mode().Perm())
		r.Remedy = "chmod 600 " + c.Server.TokenFile
	}
	add(r)

	results = append(results, checkServer(ctx, c, mac, token, log)...)
	results = append(results, checkHardware(ctx, c, log)...)
	return results
}

func tokenSource(c ServerConfig, token string) string {
	switch {
	case c.TokenFile != "":
		return "from " + c.TokenFile
	case token != "":
		return "from $" + tokenEnv
	}
	return "none (no Authorization header is sent)"
}

// checkServer walks the way to the server: name, port, certificate, then the WebSocket
// handshake with the device's headers and token.
func checkServer(ctx context.Context, c *Config, mac, token string, log *slog.Logger) []checkResult {
	if c.Server.URL == "" {
		return []checkResult{{Name: "server", Err: errors.New("server.url is not set"), Remedy: "set server.url in the config file, or pass --server"}}
	}
	u, err := url.Parse(c.Server.URL)
	if err != nil { // unreachable: checked when parsed
		return []checkResult{{Name: "server", Err: err}}
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"ws": "80", "wss": "443"}[u.Scheme]
	}
	timeout := c.Connection.HandshakeTimeout
	var results []checkResult
	add := func(r checkResult) bool {
		results = append(results, r)
		return r.Err == nil
	}

	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tlsConf, err := tlsConfig(c.Server, log)
	if err != nil {
		add(checkResult{Name: "tls", Err: err, Remedy: "fix the TLS files in the server section"})
		return results
	}
	// Through a proxy, as run would go, the name, port and certificate are the proxy's business
	// until the handshake, which checks them end to end.
	if proxy := proxyFor(u); proxy != nil {
		add(checkResult{Name: "proxy", Detail: "through " + proxy.Redacted() + " (from the environment); the handshake below checks the way"})
	} else if !checkDirect(dctx, host, port, tlsConf, add) {
		return results
	}
	return append(results, checkHandshake(ctx, c, mac, token, tlsConf))
}

// proxyFor returns the proxy the environment names for u (HTTPS_PROXY for wss, HTTP_PROXY for
// ws, NO_PROXY honoured), as transport.Dial will use it; nil for none.
func proxyFor(u *url.URL) *url.URL {
	pu := *u
	pu.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	p, err := http.ProxyFromEnvironment(&http.Request{URL: &pu})
	if err != nil {
		return nil
	}
	return p
}

// checkDirect checks the server's name, port and certificate, reporting each through add, which
// says whether the next step may run.
func checkDirect(dctx context.Context, host, port string, tlsConf *tls.Config, add func(checkResult) bool) bool {
	if net.ParseIP(host) == nil {
		addrs, err := net.DefaultResolver.LookupHost(dctx, host)
		if !add(checkResult{Name: "dns", Detail: host + " is " + strings.Join(addrs, ", "), Err: err,
			Remedy: "check the host name in server.url and the board's DNS (/etc/resolv.conf)"}) {
			return false
		}
	}

	addr := net.JoinHostPort(host, port)
	start := time.Now()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if !add(checkResult{Name: "tcp", Detail: fmt.Sprintf("%s answers (%s)", addr, time.Since(start).Round(time.Millisecond)), Err: err,
		Remedy: "is the server running and listening on " + addr + "? is a firewall in the way?"}) {
		return false
	}
	if tlsConf == nil {
		conn.Close()
		return true
	}
	{
		tc := tlsConf.Clone()
		if tc.ServerName == "" {
			tc.ServerName = host
		}
		tconn := tls.Client(conn, tc)
		err := tconn.HandshakeContext(dctx)
		r := checkResult{Name: "tls", Err: err,
			Remedy: "is the server's certificate for " + tc.ServerName + "? set server.ca_file to the CA that signed it, or server.server_name to the name it carries"}
		if err == nil {
			r.Detail = tlsDetail(tconn.ConnectionState())
			if tc.InsecureSkipVerify {
				r.Warn = "connected WITHOUT verifying the certificate (server.insecure_skip_verify)"
				r.Remedy = "set server.ca_file to the CA that signed the server's certificate and turn server.insecure_skip_verify off"
			}
		}
		tconn.Close()
		return add(r)
	}
}

// checkHandshake opens the WebSocket with the device's headers and token, and closes it.
func checkHandshake(ctx context.Context, c *Config, mac, token string, tlsConf *tls.Config) checkResult {
	header := http.Header{}
	header.Set("Device-Id", mac)
	header.Set("User-Agent", "devicectl/"+buildVersion())
	stream, err := transport.Dial(ctx, c.Server.URL, &transport.DialOptions{
		Header:           header,
		Token:            token,
		TLSConfig:        tlsConf,
		HandshakeTimeout: c.Connection.HandshakeTimeout,
		PingInterval:     -1,
	})
	r := checkResult{Name: "websocket", Detail: "the server accepts the device's handshake", Err: err,
		Remedy: "is server.url's path the server's device endpoint?"}
	var he *transport.HandshakeError
	if errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden) {
		r.Remedy = "the server refused the token: check server.token_file or $" + tokenEnv
	}
	if err == nil {
		stream.Close()
	}
	return r
}

func tlsDetail(st tls.ConnectionState) string {
	if len(st.PeerCertificates) == 0 {
		return "verified"
	}
	leaf := st.PeerCertificates[0]
	return fmt.Sprintf("verified: %s, issued by %s, valid until %s", leaf.Subject.CommonName, leaf.Issuer.CommonName, leaf.NotAfter.Format("2006-01-02"))
}

// checkHardware opens each configured part as run does and reads it back. It does not halt them:
// halting mutes the speaker and blanks the face.
func checkHardware(ctx context.Context, c *Config, log *slog.Logger) []checkResult {
	h := c.Hardware
	if h.Mode == "sim" {
		return []checkResult{{Name: "hardware", Detail: "all simulated (hardware.mode sim, or --hardware sim)"}}
	}
	b := &buses{}
	defer b.close()
	var results []checkResult

	r := checkResult{Name: "speaker", Remedy: speakerRemedy(h.Speaker)}
	if spk, err := openSpeaker(ctx, h.Speaker, b, true, log); err != nil {
		r.Err = err
		if h.Speaker.Optional {
			r.Err, r.Warn = nil, err.Error()+" (optional: run starts without amplify_volume)"
		}
	} else if v, err := spk.Volume(ctx); err != nil {
		r.Err = err
	} else {
		r.Detail = fmt.Sprintf("%s, volume %d%%", spk, v)
	}
	results = append(results, r)

	r = checkResult{Name: "face", Remedy: faceRemedy(h.Face)}
	if face, err := openFace(ctx, h.Face, b, log); err != nil {
		r.Err = err
		if h.Face.Optional {
			r.Err, r.Warn = nil, err.Error()+" (optional: run starts without set_virtual_human_expression)"
		}
	} else if e, err := face.Expression(ctx); err != nil {
		r.Err = err
	} else {
		r.Detail = fmt.Sprintf("%s, showing %s", face, e)
	}
	results = append(results, r)

	r = checkResult{Name: "speech", Detail: "off (hardware.speech.driver none)",
		Remedy: "install espeak-ng (apt-get install espeak-ng), or set hardware.speech.command to a program that is installed"}
	if h.Speech.Driver != "none" {
		out, err := openSpeech(h.Speech, c.Device.Language, log)
		if err != nil {
			r.Err = err
		} else {
			r.Detail = "speaks through " + out.String()
			out.Close()
		}
	}
	return append(results, r)
}

func speakerRemedy(c SpeakerConfig) string {
	switch c.Driver {
	case "alsa":
		return "list the devices with aplay -L and the controls with amixer -D DEVICE scontrols; set hardware.speaker.device and hardware.speaker.control; is the user in the audio group?"
	case "pulse":
		return "is PulseAudio or PipeWire running for this user (pactl info / wpctl status)? set hardware.speaker.device to a sink from pactl list short sinks"
	case "max9744":
		return "check the wiring and power, and find the address with i2cdetect -y BUS (0x49 to 0x4B); set hardware.speaker.bus and hardware.speaker.address"
	}
	return ""
}

func faceRemedy(c FaceConfig) string {
	switch c.Driver {
	case "ssd1306":
		if c.Connection == "spi" {
			return "check the wiring (MOSI, SCLK, CS, DC, RST) and that SPI is enabled; set hardware.face.bus and hardware.face.dc_pin"
		}
		return "check the wiring and find the address with i2cdetect -y BUS (usually 0x3C or 0x3D); set hardware.face.bus and hardware.face.address"
	case "apa102", "ws2812":
		return "is SPI enabled (ls /dev/spidev*) and the user in the spi group? set hardware.face.bus to the port"
	case "command":
		return "is hardware.face.command's program installed and executable by the service user?"
	}
	return ""
}
