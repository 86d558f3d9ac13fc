//go:build !devicectl_omit_serve

package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/serveproc"
)

// served is `devicectl serve` running in this process, as the command runs it, with its console
// on pipes.
type served struct {
	url string         // the devices' ws:// URL, from the banner
	in  *io.PipeWriter // the console's input: serve reads commands from it until it is closed
	out *lineWaiter    // the console's output: devices as they come and go, answers, replies

	cancel  context.CancelFunc
	done    chan int      // serve's exit code
	logDone chan struct{} // closed once its log has been read to the end
	once    sync.Once
	code    int
}

// startServe runs `devicectl serve` with args in this process and waits for its banner. Every
// other line it logs, before the banner or after, goes to logLine (nil drops them), so serve never
// waits on its log. When the test ends serve is stopped and must exit 0.
func startServe(t *testing.T, logLine func(string), args ...string) *served {
	t.Helper()
	if logLine == nil {
		logLine = func(string) {}
	}
	ctx, cancel := context.WithCancel(t.Context())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	s := &served{in: inW, out: newLineWaiter(outR), cancel: cancel, done: make(chan int, 1), logDone: make(chan struct{})}
	go func() {
		defer outW.Close()
		defer errW.Close()
		s.done <- execute(ctx, append([]string{"serve"}, args...), inR, outW, errW)
	}()
	banner := make(chan string, 1)
	go func() {
		defer close(s.logDone)
		lines := bufio.NewScanner(errR)
		lines.Buffer(nil, 1<<20)
		seen := false
		for lines.Scan() {
			if url, ok := serveproc.BannerURL(lines.Text()); ok && !seen {
				banner <- url
				seen = true
				continue
			}
			logLine(lines.Text())
		}
		io.Copy(io.Discard, errR) // past a line too long to scan
	}()
	t.Cleanup(func() {
		if code := s.stop(); code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	select {
	case s.url = <-banner:
	case <-s.logDone:
		t.Fatal("serve ended before its banner")
	case <-time.After(10 * time.Second):
		t.Fatal("no banner from serve within 10s")
	}
	return s
}

// api is serve's HTTP address, http://HOST:PORT.
func (s *served) api() string {
	return "http" + strings.TrimPrefix(strings.TrimSuffix(s.url, "/"), "ws")
}

// stop interrupts serve (its context ends and its input closes, as on SIGINT) and returns its
// exit code once it has returned and its log has been read.
func (s *served) stop() int {
	s.in.Close()
	s.cancel()
	return s.wait()
}

// wait returns serve's exit code once it has returned by itself (after quit) and its log has been
// read.
func (s *served) wait() int {
	s.once.Do(func() {
		s.code = <-s.done
		<-s.logDone
	})
	return s.code
}
