//go:build !devicectl_omit_sim && !devicectl_omit_serve

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/httpdo"
)

// startWeb runs devicectl with args and stdin, and returns the page's URL from the line that
// prints it; the command's exit code comes on done once ctx is cancelled.
func startWeb(t *testing.T, ctx context.Context, stdin string, args ...string) (url string, done <-chan int) {
	t.Helper()
	errR, errW := io.Pipe()
	inR, inW := io.Pipe()
	ch := make(chan int, 1)
	go func() {
		defer errW.Close()
		ch <- execute(ctx, args, inR, io.Discard, errW)
	}()
	go func() { // the script, then an open stdin: the command keeps serving
		io.WriteString(inW, stdin)
		<-ctx.Done()
		inW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	lines := newLineWaiter(errR)
	line := lines.waitFor(t, "the web page is at http://")
	go func() {
		for range lines.lines { // drain, so the command never blocks on stderr
		}
	}()
	_, url, _ = strings.Cut(line, "the web page is at ")
	return strings.TrimSpace(url), ch
}

// firstEvent reads the snapshot the event stream starts with.
func firstEvent(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "web/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended before its snapshot: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
}

// sim --web serves the page on the address given, with the sim's device on it, and keeps
// serving after a script's end until interrupted.
func TestSimWeb(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url, done := startWeb(t, ctx, "把音量调到30\n", "sim", "--web=127.0.0.1:0")
	if code, body := httpdo.Get(t, url); code != 200 || !strings.Contains(body, "<title>devicectl</title>") {
		t.Fatalf("GET %s: %d %.100q", url, code, body)
	}
	if snap := firstEvent(t, url); !strings.Contains(snap, `"mac":"AA-BB-CC-DD-EE-FF","connected":true`) {
		t.Errorf("the page's snapshot has no connected sim device: %s", snap)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("sim --web exit %d after interrupt, want 0", code)
	}
}

// Off loopback the page needs a token, which sim has none of.
func TestSimWebRefusesBeyondLoopback(t *testing.T) {
	r := runCLI(t.Context(), "", "sim", "--web=0.0.0.0:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "agent.listen: 0.0.0.0:0 is reachable beyond this machine") {
		t.Errorf("sim --web=0.0.0.0:0: exit %d, stderr %q", r.code, r.stderr)
	}
}

// serve --web serves the page at serve's own address; without it, / is not the page.
func TestServeWeb(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url, done := startWeb(t, ctx, "", "serve", "--web", "--listen", "127.0.0.1:0", "--state-dir", t.TempDir())
	if code, body := httpdo.Get(t, url); code != 200 || !strings.Contains(body, `<label for="say-text">`) {
		t.Fatalf("GET %s: %d %.100q", url, code, body)
	}
	if snap := firstEvent(t, url); !strings.Contains(snap, `"devices":[]`) {
		t.Errorf("snapshot %s, want no devices yet", snap)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve --web exit %d after interrupt, want 0", code)
	}
}
