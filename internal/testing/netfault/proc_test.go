//go:build linux

package netfault

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logLine is one line a process wrote, with when the test read it: the test measures recovery
// times by these, on one clock for both processes.
type logLine struct {
	at   time.Time
	text string
}

// lineLog collects one output stream of a process line by line, so the test can wait for a line
// instead of sleeping, and show the last lines when something fails.
type lineLog struct {
	mu      sync.Mutex
	lines   []logLine
	changed chan struct{} // closed and replaced when a line arrives or the stream ends
	eof     bool
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

// feed reads r to its end. bufio.Reader, not Scanner: a long line (a tool's result in a debug
// log) must not stop the reading, or the process would block on a full pipe.
func (l *lineLog) feed(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			l.add(strings.TrimRight(s, "\r\n"))
		}
		if err != nil {
			break
		}
	}
	l.mu.Lock()
	l.eof = true
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *lineLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, logLine{at: time.Now(), text: s})
	close(l.changed)
	l.changed = make(chan struct{})
}

// len is the number of lines so far: a mark to wait for lines after.
func (l *lineLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// snapshot returns the lines from index from on.
func (l *lineLog) snapshot(from int) []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from > len(l.lines) {
		return nil
	}
	return append([]logLine(nil), l.lines[from:]...)
}

// errEOF: the stream ended (the process exited) before the line came.
var errEOF = errors.New("the output ended")

// waitFor returns the first line at index from or later that match accepts, and its index.
func (l *lineLog) waitFor(ctx context.Context, from int, match func(string) bool) (int, logLine, error) {
	for {
		l.mu.Lock()
		for i := from; i < len(l.lines); i++ {
			if match(l.lines[i].text) {
				line := l.lines[i]
				l.mu.Unlock()
				return i, line, nil
			}
		}
		from = max(from, len(l.lines))
		changed, eof := l.changed, l.eof
		l.mu.Unlock()
		if eof {
			return 0, logLine{}, errEOF
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, logLine{}, ctx.Err()
		}
	}
}

// tail returns the last n lines that skip does not reject (nil keeps all), indented, for a
// failure message.
func (l *lineLog) tail(n int, skip func(string) bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lines []logLine
	for i := len(l.lines) - 1; i >= 0 && len(lines) < n; i-- {
		if skip == nil || !skip(l.lines[i].text) {
			lines = append(lines, l.lines[i])
		}
	}
	if len(lines) == 0 {
		return "    (nothing)\n"
	}
	var b strings.Builder
	for i := len(lines) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "    %s %s\n", lines[i].at.Format("15:04:05.000"), lines[i].text)
	}
	return b.String()
}

// proc is a started process whose stdout and stderr are read into lineLogs.
type proc struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser // nil unless asked for
	stdout  *lineLog
	stderr  *lineLog
	started time.Time
	done    chan struct{} // closed once the process has exited and its output is read
	err     error         // Wait's error, once done is closed
}

// startProc starts prog and stops it (SIGKILL) when the test ends, if it is still running.
// withStdin gives the process a pipe to write to; otherwise its stdin is /dev/null.
func startProc(t *testing.T, name string, withStdin bool, prog string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(prog, args...)
	// No token from the test's environment reaches the stand-in server or a log.
	cmd.Env = append(os.Environ(), "DEVICECTL_TOKEN=")
	// When the test binary dies (a -timeout panic runs no cleanups) its processes die with it,
	// and the namespace they kept alive can be removed by the next run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &proc{name: name, cmd: cmd, stdout: newLineLog(), stderr: newLineLog(), done: make(chan struct{})}
	var err error
	if withStdin {
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p.started = time.Now()
	// One owner for the readers and the Wait: Wait must come after the pipes are read to the end.
	go func() {
		var wg sync.WaitGroup
		wg.Go(func() { p.stdout.feed(outPipe) })
		wg.Go(func() { p.stderr.feed(errPipe) })
		wg.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.done
	})
	return p
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// signal sends sig unless the process has exited.
func (p *proc) signal(sig os.Signal) {
	if p.running() {
		p.cmd.Process.Signal(sig)
	}
}

// wait waits for the process to exit and returns Wait's error.
func (p *proc) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("%s still running: %w", p.name, ctx.Err())
	}
}

// server is `devicectl serve` inside the namespace, driven through its console on stdin.
type server struct {
	*proc
	mu sync.Mutex // one console command at a time, as the console runs them
}

// consoleAnswer sends one console command and returns the line the console printed for it: the
// device's JSON-RPC response to a call, or "error: ...". Registration lines printed meanwhile
// ("+ MAC registered ...", "- MAC disconnected") are not answers.
func (s *server) consoleAnswer(ctx context.Context, command string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := s.stdout.len()
	if _, err := io.WriteString(s.stdin, command+"\n"); err != nil {
		return "", fmt.Errorf("writing to the server's console: %w", err)
	}
	// Fed from a pipe, the console echoes each command after its prompt before running it.
	echo := "serve> " + command
	i, _, err := s.stdout.waitFor(ctx, mark, func(l string) bool { return l == echo })
	if err != nil {
		return "", fmt.Errorf("the console did not take %q: %w", command, err)
	}
	_, ans, err := s.stdout.waitFor(ctx, i+1, func(l string) bool {
		return !strings.HasPrefix(l, "+ ") && !strings.HasPrefix(l, "- ")
	})
	if err != nil {
		return "", fmt.Errorf("no answer to %q: %w", command, err)
	}
	return ans.text, nil
}

// rpcAnswer is a JSON-RPC response as the console prints it.
type rpcAnswer struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// entry is one JSON log line of devicectl (--log-format json).
type entry map[string]any

// parseEntry returns the line's fields, or nil when it is not a JSON object (a race report, a
// panic).
func parseEntry(line string) entry {
	if !strings.HasPrefix(line, "{") {
		return nil
	}
	var e entry
	if json.Unmarshal([]byte(line), &e) != nil {
		return nil
	}
	return e
}

func (e entry) str(key string) string {
	s, _ := e[key].(string)
	return s
}

// logMsg matches a JSON log line with the message msg whose attributes pass every check.
func logMsg(msg string, checks ...func(entry) bool) func(string) bool {
	return func(line string) bool {
		e := parseEntry(line)
		if e == nil || e.str("msg") != msg {
			return false
		}
		for _, c := range checks {
			if !c(e) {
				return false
			}
		}
		return true
	}
}

// attrContains checks that the attribute key holds text containing sub.
func attrContains(key, sub string) func(entry) bool {
	return func(e entry) bool { return strings.Contains(e.str(key), sub) }
}
