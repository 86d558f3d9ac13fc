package mcpset

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/bearer"
	"github.com/devicectl/devicectl/internal/procgroup"
	"github.com/devicectl/devicectl/internal/tail"
)

const (
	// grace is how long a stdio server has to exit once its stdin is closed (the MCP way to ask
	// it to stop) before its process group is killed.
	grace = time.Second
	// exitWait is how long a broken session waits for the program's exit status, to say why.
	exitWait = 500 * time.Millisecond
	// maxStderr is how much of the end of a stdio server's stderr an error quotes.
	maxStderr = 512
)

// conn is the transport of one session, and for a stdio server the process behind it.
type conn struct {
	transport mcp.Transport
	url       string        // of an HTTP server; "" for a stdio one
	timeout   time.Duration // InitTimeout, for messages

	// A stdio server's process.
	cmd    *exec.Cmd
	files  []*os.File         // our ends of its stdin and stdout
	kill   context.CancelFunc // kills its process group
	stderr *lockedTail
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's, once exited is closed
	wg     sync.WaitGroup
}

// connect starts the program of a stdio server, or prepares the HTTP transport.
func (s *Set) connect(context.Context) (*conn, error) {
	if s.path == "" {
		return &conn{url: s.opts.URL, timeout: s.opts.InitTimeout, transport: &mcp.StreamableClientTransport{
			Endpoint:   s.opts.URL,
			HTTPClient: bearerClient(s.opts.HTTPClient, s.opts.BearerToken, s.opts.URL),
		}}, nil
	}
	// Our own pipes rather than exec's: Wait would close exec's read end of stdout under the
	// SDK's reader as soon as the program exits, losing its last answer.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	// The process outlives the call that started it, and stops when stop says.
	procCtx, kill := context.WithCancel(context.Background())
	c := &conn{timeout: s.opts.InitTimeout, kill: kill, stderr: &lockedTail{b: tail.Buffer{Max: maxStderr}}, exited: make(chan struct{})}
	c.cmd = exec.CommandContext(procCtx, s.path, s.opts.Command[1:]...)
	c.cmd.Args[0] = s.opts.Command[0]
	c.cmd.Env = s.env()
	c.cmd.Stdin = inR
	c.cmd.Stdout = outW
	c.cmd.Stderr = c.stderr
	c.cmd.WaitDelay = grace // a process it left running may hold stderr open
	procgroup.KillGroup(c.cmd)
	err = c.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		kill()
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", s.opts.Command[0], err)
	}
	c.files = []*os.File{inW, outR}
	c.transport = &mcp.IOTransport{Reader: outR, Writer: inW}
	c.wg.Go(func() {
		c.err = c.cmd.Wait()
		close(c.exited)
	})
	return c, nil
}

// env is the program's environment: InheritedEnv from ours, then Options.Env.
func (s *Set) env() []string {
	var env []string
	for _, k := range InheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, s.opts.Env...)
}

// stop ends the program of a stdio server: stdin closed, a moment to exit, then its process
// group killed. It returns once the program is gone.
func (c *conn) stop() {
	if c.cmd == nil {
		return
	}
	for _, f := range c.files {
		_ = f.Close() // the session may have closed them already
	}
	t := time.NewTimer(grace)
	select {
	case <-c.exited:
	case <-t.C:
	}
	t.Stop()
	c.kill()
	c.wg.Wait()
}

// explain makes err, met at stage (initialize, tools/list, ...) with ctx, say what happened:
// no answer in time, or the program's exit and last words.
func (c *conn) explain(stage string, ctx context.Context, err error) error {
	if c.cmd != nil {
		t := time.NewTimer(exitWait)
		defer t.Stop()
		select {
		case <-c.exited:
			msg := fmt.Sprintf("%s: the program exited (%v)", stage, c.err)
			if out := c.stderr.String(); out != "" {
				msg += "; its stderr ends: " + out
			}
			return fmt.Errorf("%s: %w", msg, err)
		case <-t.C:
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer%s within %v: %w", stage, c.where(), c.timeout, err)
	}
	return fmt.Errorf("%s%s: %w", stage, c.where(), err)
}

func (c *conn) where() string {
	if c.url != "" {
		return " from " + c.url
	}
	return ""
}

// lockedTail is a tail.Buffer that explain may read while exec writes to it.
type lockedTail struct {
	mu sync.Mutex
	b  tail.Buffer
}

func (t *lockedTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.Write(p)
}

func (t *lockedTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// bearerClient returns c, sending token as Authorization: Bearer when it is set, to endpoint's
// host only: a redirect elsewhere does not take it along.
func bearerClient(c *http.Client, token, endpoint string) *http.Client {
	if token == "" {
		return c
	}
	cc := *c
	cc.Transport = bearer.For(endpoint, token, cc.Transport)
	return &cc
}
