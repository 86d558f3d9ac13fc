package pulsetest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequireEnv names the environment variable that turns a missing program
// from a skip into a failure when it is "1".
const RequireEnv = "DEVICECTL_REQUIRE_HW"

// Sink is the name of the null sink Start creates. It is also the default
// sink, being the only one.
const Sink = "speaker"

// Unavailable ends the test because something it needs is missing: a
// failure when RequireEnv is "1", a skip otherwise. The message should say
// what is missing; the Debian package to install is appended.
func Unavailable(t testing.TB, aptPackage, format string, args ...any) {
	t.Helper()
	args = append(args, aptPackage)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf(format+" (apt-get install %s; %s=1 makes this a failure)", append(args, RequireEnv)...)
	}
	t.Skipf(format+" (apt-get install %s)", args...)
}

// Need returns the path of program, or ends the test through Unavailable.
func Need(t testing.TB, program, aptPackage string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		Unavailable(t, aptPackage, "%s is not installed: %v", program, err)
	}
	return path
}

// Run runs program with args beside the backend under test, to change the mixer behind its back
// or to look at it, so that a test can tell a read-back from a remembered number. It returns
// what the program printed, and fails t with that if the program fails.
func Run(t testing.TB, program string, args ...string) string {
	t.Helper()
	out, err := exec.Command(program, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", program, args, err, out)
	}
	return string(out)
}

// Server is a running PulseAudio daemon that the test owns.
type Server struct {
	// Address is the value of PULSE_SERVER that reaches it.
	Address string

	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

// Start runs a PulseAudio daemon with only a unix socket and one null sink
// named Sink (the default sink), points the test's environment at it, and
// stops it when the test ends. extraSinks are more null sinks by those
// names, each with its monitor source NAME.monitor: a voice test plays
// speech into one whose monitor is the microphone.
func Start(t testing.TB, extraSinks ...string) *Server {
	t.Helper()
	bin := Need(t, "pulseaudio", "pulseaudio")

	// A unix socket path must fit in 108 bytes; t.TempDir's names grow with
	// the test's name, so the socket lives in a short directory of its own.
	sockDir, err := os.MkdirTemp("", "pa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	socket := filepath.Join(sockDir, "native")

	home := t.TempDir()
	runtime := filepath.Join(home, "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}

	s := &Server{Address: "unix:" + socket, log: new(syncBuffer), done: make(chan struct{})}
	args := []string{
		"-n", // no default.pa: only the modules below
		"--daemonize=no",
		"--exit-idle-time=-1",
		"--use-pid-file=no",
		"--realtime=no",
		"--high-priority=no",
		"--log-target=stderr",
		"-L", "module-native-protocol-unix auth-anonymous=1 socket=" + socket,
		"-L", "module-null-sink sink_name=" + Sink,
	}
	for _, name := range extraSinks {
		args = append(args, "-L", "module-null-sink sink_name="+name)
	}
	// The first null sink loaded is the default one: Sink stays it.
	s.cmd = exec.Command(bin, args...)
	// The daemon writes its cookie and state under HOME and
	// XDG_RUNTIME_DIR: keep them out of the real home. As root it only
	// warns that it was not started with --system, which would need a
	// pulse user and the system bus.
	s.cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+runtime, "PULSE_SERVER=")
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting pulseaudio: %v", err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.stop)

	if err := s.waitReady(socket, 10*time.Second); err != nil {
		t.Fatalf("pulseaudio did not come up: %v\n%s", err, s.log.String())
	}

	t.Setenv("PULSE_SERVER", s.Address)
	t.Setenv("HOME", home)
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	return s
}

// Log returns what the daemon has printed so far, for failure messages.
func (s *Server) Log() string { return s.log.String() }

// waitReady polls until the socket accepts a connection, which it does
// only after every -L module has loaded.
func (s *Server) waitReady(socket string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-s.done:
			return errors.New("the daemon exited: " + s.cmd.ProcessState.String())
		default:
		}
		c, err := net.Dial("unix", socket)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// syncBuffer is a bytes.Buffer that the daemon's output copier and the test
// can use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
