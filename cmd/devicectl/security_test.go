package main

// Security tests of the daemon as it is deployed (docs/design.md, "Reliability and security rules"):
// TLS verification through the real binary, the token file's mode, the token kept out of logs,
// arguments and the environments of the programs devicectl starts, and the configured size
// limits. The transport's own TLS cases (every verification failure at the Dial level) are in
// transport/tls_test.go; these check what a device maker sees: the config keys, the log line, and
// a process that keeps backing off instead of dying.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/shscript"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/internal/testing/testca"
	"github.com/devicectl/devicectl/protocol"
)

// tlsStandIn serves the stand-in agent server over TLS with cert. With clientCAs set it demands a
// client certificate and verifies it against them. It returns the server, its port and a channel
// of the common name of each client certificate presented.
func tlsStandIn(t *testing.T, cert tls.Certificate, clientCAs *x509.CertPool) (*agenttest.Server, string, <-chan string) {
	t.Helper()
	srv := agenttest.NewServer(nil)
	peers := make(chan string, 64)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			select {
			case peers <- r.TLS.PeerCertificates[0].Subject.CommonName:
			default:
			}
		}
		srv.ServeHTTP(w, r)
	}))
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if clientCAs != nil {
		hs.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		hs.TLS.ClientCAs = clientCAs
	}
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what these tests cause
	hs.StartTLS()
	// Cleanups run last first: the device lines close (and their goroutines end) before the
	// listener goes.
	t.Cleanup(hs.Close)
	t.Cleanup(func() { srv.Close() })
	_, port, err := net.SplitHostPort(hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return srv, port, peers
}

// runConfig is a config for `run` in these tests: debug logs in format, a quick back-off so that
// retries show within a second, and the sim parts unless extra says otherwise. serverKeys are
// more lines of the server section; extra is more top-level sections.
func runConfig(t *testing.T, url, serverKeys, format, extra string) string {
	t.Helper()
	cfg := fmt.Sprintf(`server:
  url: %s
%sdevice:
  mac: AA-BB-CC-DD-EE-FF
  state_dir: %s
  language: en
connection:
  ping_interval: 1s
  backoff_min: 20ms
  backoff_max: 100ms
log:
  level: debug
  format: %s
%s`, url, serverKeys, t.TempDir(), format, extra)
	path := standin.WriteFile(t, "devicectl.yaml", cfg)
	return path
}

// process is the real devicectl binary running `run`.
type process struct{ *serveproc.Device }

// startProcess runs `bin run --config config` with env as its whole environment until the test
// ends.
func startProcess(t *testing.T, bin, config string, env []string) process {
	t.Helper()
	return process{serveproc.RunWith(t, bin, env, "run", "--config", config)}
}

// environWithout is this process's environment less the variables named.
func environWithout(names ...string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, k)
	})
}

// alive fails the test if the process has exited.
func (p process) alive(t *testing.T) {
	t.Helper()
	select {
	case <-p.Exited:
		t.Fatalf("devicectl exited (%v); log:\n%s", p.WaitErr, p.Err.String())
	default:
	}
}

// waitLog waits until the log has at least n lines matching re and returns them.
func (p process) waitLog(t *testing.T, re *regexp.Regexp, n int) []string {
	t.Helper()
	var found []string
	matched := func(log string) bool {
		found = found[:0]
		for line := range strings.Lines(log) {
			if re.MatchString(line) {
				found = append(found, line)
			}
		}
		return len(found) >= n
	}
	if _, ok := p.Err.WaitUntil(t, fmt.Sprintf("%d log lines matching %q", n, re), p.Exited, matched); !ok {
		t.Fatalf("devicectl exited (%v) before %d log lines matching %q; log:\n%s", p.WaitErr, n, re, p.Err.String())
	}
	return found
}

// retryLine matches the agent's log line for a failed attempt in the text format, capturing the
// wait before the next one.
var retryLine = regexp.MustCompile(`level=WARN msg="not connected; retrying" .*retry_in=(\S+) attempt=\d+`)

// TestRunTLS runs the real binary against a wss:// stand-in server whose certificate comes from
// a throwaway CA. A certificate it cannot verify is refused with the verification failure named in
// the log, and the daemon keeps backing off (within connection.backoff_max) instead of exiting or
// spinning; the right ca_file, server_name, or client certificate for mutual TLS lets it register.
func TestRunTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := serveproc.Build(t)
	ca := testca.New(t, "devicectl-test-ca")
	stranger := testca.New(t, "someone-else")
	byIP, _, _ := ca.Issue(t, "server-ip", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	byName, _, _ := ca.Issue(t, "server-name", x509.ExtKeyUsageServerAuth, "agent.test")
	_, deviceCert, deviceKey := ca.Issue(t, "device", x509.ExtKeyUsageClientAuth)
	_, strangerCert, strangerKey := stranger.Issue(t, "stranger", x509.ExtKeyUsageClientAuth)
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(ca.Cert)

	cases := []struct {
		name       string
		cert       tls.Certificate
		clientCAs  *x509.CertPool // non-nil: the server demands a client certificate
		host       string         // in server.url
		serverKeys string
		// refused is the verification failure the log must name; empty means the device registers.
		refused string
		peer    string // the client certificate the server must have seen
	}{
		{name: "unknown CA", cert: byIP, host: "127.0.0.1", serverKeys: "  ca_file: " + stranger.File + "\n",
			refused: "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{name: "system roots by default", cert: byIP, host: "127.0.0.1",
			refused: "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{name: "hostname mismatch", cert: byName, host: "localhost", serverKeys: "  ca_file: " + ca.File + "\n",
			refused: "tls: failed to verify certificate: x509: certificate is valid for agent.test, not localhost"},
		{name: "server_name fixes the mismatch", cert: byName, host: "localhost",
			serverKeys: "  ca_file: " + ca.File + "\n  server_name: agent.test\n"},
		{name: "mutual TLS", cert: byIP, clientCAs: clientCAs, host: "127.0.0.1",
			serverKeys: "  ca_file: " + ca.File + "\n  cert_file: " + deviceCert + "\n  key_file: " + deviceKey + "\n", peer: "device"},
		{name: "mutual TLS without a client certificate", cert: byIP, clientCAs: clientCAs, host: "127.0.0.1",
			serverKeys: "  ca_file: " + ca.File + "\n", refused: "remote error: tls: certificate required"},
		{name: "mutual TLS with a stranger's certificate", cert: byIP, clientCAs: clientCAs, host: "127.0.0.1",
			serverKeys: "  ca_file: " + ca.File + "\n  cert_file: " + strangerCert + "\n  key_file: " + strangerKey + "\n",
			// Go's client sends only a certificate whose issuer the server's request names, so a
			// stranger's is not sent at all and the server says what it says without one.
			refused: "remote error: tls: certificate required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, port, peers := tlsStandIn(t, tc.cert, tc.clientCAs)
			url := "wss://" + net.JoinHostPort(tc.host, port) + "/device"
			// SSL_CERT_FILE and SSL_CERT_DIR would change what "the system roots" are.
			p := startProcess(t, bin, runConfig(t, url, tc.serverKeys, "text", ""),
				environWithout(config.TokenEnv, "SSL_CERT_FILE", "SSL_CERT_DIR"))

			if tc.refused == "" {
				d, err := srv.WaitDevice(standin.WaitCtx(t), "AA-BB-CC-DD-EE-FF")
				if err != nil {
					t.Fatalf("%v; log:\n%s", err, p.Err.String())
				}
				if tc.peer != "" {
					select {
					case cn := <-peers:
						if cn != tc.peer {
							t.Errorf("the server saw client certificate %q, want %q", cn, tc.peer)
						}
					default:
						t.Error("the server saw no client certificate")
					}
				}
				if resp, err := d.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": 5}`)); err != nil || resp.Error != nil {
					t.Errorf("a call over the verified line: %+v, %v", resp, err)
				}
				p.Terminate(t)
				return
			}

			// Three failed attempts in a row, each naming the failure, and the process still up.
			lines := p.waitLog(t, regexp.MustCompile(`level=WARN msg="not connected; retrying" .*`+regexp.QuoteMeta(tc.refused)+`.* attempt=3\b`), 1)
			t.Logf("log: %s", strings.TrimSpace(lines[0]))
			p.alive(t)
			for _, line := range p.waitLog(t, retryLine, 3) {
				wait, err := time.ParseDuration(retryLine.FindStringSubmatch(line)[1])
				if err != nil || wait > 100*time.Millisecond {
					t.Errorf("retry_in %v (%v) in %q, want at most connection.backoff_max (100ms)", wait, err, line)
				}
			}
			if n := len(srv.Devices()); n != 0 {
				t.Errorf("%d devices registered over a line that should have been refused", n)
			}
			p.Terminate(t)
		})
	}
}

// TestRunWarnsLooseTokenFile runs the real binary with server.token_file readable by group or
// others: the log warns (naming the key, file and mode), and the token is still used. A file of
// mode 0600 gets no warning, so the check can tell the two apart.
func TestRunWarnsLooseTokenFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := serveproc.Build(t)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o600} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv := standin.Start(t, nil)
			token := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(token, []byte("loose-token-"+strconv.FormatUint(uint64(mode), 8)+"\n"), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(token, mode); err != nil { // whatever the umask
				t.Fatal(err)
			}
			p := startProcess(t, bin, runConfig(t, srv.URL(), "  token_file: "+token+"\n", "text", ""), environWithout(config.TokenEnv))
			d := standin.NextRegistration(t, srv)
			if got, want := d.Header.Get("Authorization"), "Bearer loose-token-"+strconv.FormatUint(uint64(mode), 8); got != want {
				t.Errorf("Authorization %q, want %q", got, want)
			}
			p.Terminate(t)
			warning := regexp.MustCompile(`level=WARN msg="secret file is readable by group or others; chmod 600 it" key=server.token_file file=` +
				regexp.QuoteMeta(token) + ` mode=` + regexp.QuoteMeta(mode.String()) + `\n`)
			if got, want := warning.MatchString(p.Err.String()), mode&0o044 != 0; got != want {
				t.Errorf("warning logged: %v, want %v; log:\n%s", got, want, p.Err.String())
			}
		})
	}
}

// The token, as the process is started with it in each of its two places.
const hiddenToken = "tok-3b9e51c7d2a04f68"

// TestRunKeepsTokenHidden runs the real binary with the token in DEVICECTL_TOKEN or in
// server.token_file, at debug level in every log format, against a server that echoes the token
// back: in its refusal of the first registration (which the log and the disconnected hook's
// reason then carry), in a reply, and as a tool input. While a hook and the face program it
// started are running, it reads /proc for the daemon and all its descendants: the token is in no
// command line, and in no child's environment (not even the DEVICECTL_TOKEN name: hooks and parts
// inherit the environment without it). Every program run also copies its own /proc environ and
// cmdline, so the ones that end quickly (the face's idle at start-up, the other hooks) are
// checked too. Nothing on stdout or stderr holds the token.
func TestRunKeepsTokenHidden(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := serveproc.Build(t)
	for _, tc := range []struct{ source, format string }{
		{"env", "text"}, {"file", "json"}, {"env", "human"}, {"file", "auto"},
	} {
		t.Run(tc.source+"/"+tc.format, func(t *testing.T) {
			t.Parallel()
			var registrations atomic.Int32
			srv := standin.Start(t, &agenttest.Options{Register: func(_ context.Context, d *agenttest.Device) *jsonrpc2.Error {
				if registrations.Add(1) == 1 {
					return &jsonrpc2.Error{Code: -32000, Message: "refused: " + strings.TrimPrefix(d.Header.Get("Authorization"), "Bearer ")}
				}
				return nil
			}})
			dir := t.TempDir()
			// child.sh is the face program and every hook. It leaves copies of its environment and
			// command line; as the registered hook and as the face showing "smile" it also hands
			// the test its pid and waits for the test to release it, so that it can be seen running.
			child := shscript.Write(t, dir, "child.sh", `tag="${DEVICECTL_EVENT:-face-$1}"
cat /proc/$$/environ > "`+dir+`/environ.$tag.$$"
cat /proc/$$/cmdline > "`+dir+`/cmdline.$tag.$$"
case "$tag" in registered|face-smile)
	echo $$ > "`+dir+`/pid.$tag"
	while [ ! -e "`+dir+`/release" ]; do sleep 0.02; done
esac
`)
			// The pid "files" are FIFOs: writing one blocks the child until the test reads it.
			for _, tag := range []string{"registered", "face-smile"} {
				if err := syscall.Mkfifo(filepath.Join(dir, "pid."+tag), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			serverKeys := ""
			env := environWithout(config.TokenEnv)
			if tc.source == "env" {
				env = append(env, config.TokenEnv+"="+hiddenToken)
			} else {
				token := standin.WriteFile(t, "token", hiddenToken+"\n")
				serverKeys = "  token_file: " + token + "\n"
			}
			extra := fmt.Sprintf(`hardware:
  face:
    driver: command
    command: [%[1]s]
hooks:
  timeout: 5s
  connected: [%[1]s]
  registered: [%[1]s]
  disconnected: [%[1]s]
  tool_executed: [%[1]s]
  final_reply: [%[1]s]
`, child)
			p := startProcess(t, bin, runConfig(t, srv.URL(), serverKeys, tc.format, extra), env)
			pid := p.Pid

			d := standin.NextRegistration(t, srv)
			if got := d.Header.Get("Authorization"); got != "Bearer "+hiddenToken {
				t.Errorf("Authorization %q, want the token", got)
			}
			hookPID := waitPID(t, filepath.Join(dir, "pid.registered"), p)
			smiled := make(chan error, 1)
			go func() {
				resp, err := d.Execute(standin.WaitCtx(t), "set_virtual_human_expression", json.RawMessage(`{"expression": "smile"}`))
				if err == nil && resp.Error != nil {
					err = resp.Error
				}
				smiled <- err
			}()
			facePID := waitPID(t, filepath.Join(dir, "pid.face-smile"), p)

			// Both are running now: look at the whole process tree.
			tree := descendants(t, pid)
			for _, want := range []int{hookPID, facePID} {
				if !slices.Contains(tree, want) {
					t.Errorf("pid %d is not among the daemon's descendants %v", want, tree)
				}
			}
			checkProc(t, pid, "cmdline")
			for _, child := range tree {
				checkProc(t, child, "cmdline", "environ")
			}
			// The daemon's own environ is the one it was started with: it keeps an env token (so
			// does every process's), which is why the kernel lets only its owner and root read it.
			if fi, err := os.Stat(fmt.Sprintf("/proc/%d/environ", pid)); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("/proc/%d/environ: %v, %v; want readable by its owner only", pid, fi.Mode(), err)
			}

			// The server echoes the token in a whole reply (a final with no chunks before it, so it
			// is shown), and as a tool input the schema refuses.
			if err := d.Message(standin.WaitCtx(t), "final", "your token is "+hiddenToken); err != nil {
				t.Fatal(err)
			}
			resp, err := d.Execute(standin.WaitCtx(t), "amplify_volume", json.RawMessage(`{"level": "`+hiddenToken+`"}`))
			if err != nil || resp.Error == nil || resp.Error.Code != protocol.CodeInvalidParams {
				t.Errorf("amplify_volume with the token as level: %+v, %v; want -32602", resp, err)
			}

			if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := <-smiled; err != nil {
				t.Errorf("smile: %v", err)
			}
			// The hooks runner logs each run once the program has exited (the log is at debug).
			p.waitLog(t, regexp.MustCompile(`hook ran.*final_reply`), 1)
			p.waitLog(t, regexp.MustCompile(`hook ran.*tool_executed`), 1)
			p.Terminate(t)

			copies, _ := filepath.Glob(filepath.Join(dir, "*.*.*"))
			var tags []string
			for _, f := range copies {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if leaks := tokenLeaks(b); len(leaks) > 0 {
					t.Errorf("%s holds the token: %q", filepath.Base(f), leaks)
				}
				tags = append(tags, strings.Split(filepath.Base(f), ".")[1])
			}
			for _, want := range []string{"face-idle", "face-smile", "connected", "registered", "disconnected", "tool_executed", "final_reply"} {
				if !slices.Contains(tags, want) {
					t.Errorf("no copy from %s among %v", want, tags)
				}
			}
			for name, out := range map[string]string{"stderr": p.Err.String(), "stdout": p.Out.String()} {
				if strings.Contains(out, hiddenToken) {
					t.Errorf("the token is on %s:\n%s", name, out)
				}
			}
			if !strings.Contains(p.Out.String(), "your token is [redacted]") {
				t.Errorf("stdout %q, want the echoed reply with the token redacted", p.Out.String())
			}
			// The refusal was logged, without the token it quoted.
			if log := p.Err.String(); !strings.Contains(log, "refused: [redacted]") {
				t.Errorf("no redacted refusal in the log:\n%s", log)
			}
		})
	}
}

// waitPID reads the pid child.sh writes to the FIFO at path, failing if p exits first.
func waitPID(t *testing.T, path string, p process) int {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(path) // opening blocks until child.sh opens it to write
		got <- b
	}()
	var b []byte
	why := ""
	select {
	case b = <-got:
	case <-p.Exited:
		why = fmt.Sprintf("devicectl exited (%v)", p.WaitErr)
	case <-time.After(10 * time.Second):
		why = "nothing within 10s"
	}
	if why != "" {
		// Unblock the reader: opening for writing completes its open, and closing ends its read.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-got
		t.Fatalf("no pid on %s: %s; log:\n%s", filepath.Base(path), why, p.Err.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// descendants returns the pids of root's children, their children, and so on, from the parent
// pid in each /proc/PID/stat.
func descendants(t *testing.T, root int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses, so split after the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			parent[pid] = ppid
		}
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkProc fails the test if any of /proc/PID/<files> holds the token or a DEVICECTL_TOKEN
// variable. A process that has already ended is skipped: the ones that must be running were
// waited for by pid.
func checkProc(t *testing.T, pid int, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			t.Errorf("/proc/%d/%s: %v", pid, f, err)
			continue
		}
		if leaks := tokenLeaks(b); len(leaks) > 0 {
			t.Errorf("/proc/%d/%s holds the token: %q", pid, f, leaks)
		}
	}
}

// tokenLeaks returns the NUL-separated entries of an environ or cmdline that hold the token or
// set DEVICECTL_TOKEN, shortened to a variable's name so that a failure does not print the
// machine's environment.
func tokenLeaks(b []byte) []string {
	var leaks []string
	for _, e := range strings.Split(string(b), "\x00") {
		if !strings.Contains(e, hiddenToken) && !strings.HasPrefix(e, config.TokenEnv+"=") {
			continue
		}
		if k, _, ok := strings.Cut(e, "="); ok && !strings.HasPrefix(k, "-") {
			e = k + "=..."
		}
		leaks = append(leaks, e)
	}
	return leaks
}

// doctor opens the configured parts as run does; the programs it starts for them must get the
// environment without DEVICECTL_TOKEN, as run's do (daemon.go: "the token is the server's
// business, not theirs").
func TestDoctorChildrenWithoutToken(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	face := shscript.Write(t, dir, "face.sh", "cat /proc/$$/environ >> "+dir+"/environ\n")
	configPath := standin.WriteFile(t, "devicectl.yaml", "hardware:\n  face: {driver: command, command: ["+face+"]}\n")
	t.Setenv(config.TokenEnv, hiddenToken)
	r := runCLI(t.Context(), "", "doctor", "--config", configPath, "--server", "ws://127.0.0.1:1/", "--mac", "AA-BB-CC-DD-EE-FF")
	b, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		t.Fatalf("the face program did not run: %v; doctor said:\n%s", err, r.stdout)
	}
	if leaks := tokenLeaks(b); len(leaks) > 0 {
		t.Errorf("the face program doctor started has the token in its environment: %q", leaks)
	}
	if strings.Contains(r.stdout+r.stderr, hiddenToken) {
		t.Errorf("doctor printed the token:\n%s%s", r.stdout, r.stderr)
	}
}
