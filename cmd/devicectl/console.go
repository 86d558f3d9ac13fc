//go:build !devicectl_omit_serve || !devicectl_omit_sim

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
)

// commandTimeout bounds one console command (a call, a say): long enough for any tool's timeout
// to answer first.
const commandTimeout = 60 * time.Second

// console reads commands line by line and runs them against the devices registered with a
// stand-in server: the console of `devicectl sim` and `devicectl serve`.
type console struct {
	srv    *agenttest.Server
	out    *syncWriter // shared with everything else that prints, so lines never interleave
	prompt string      // "sim> ", "serve> "
	help   string
	// interactive: a person types at a terminal; show the prompt before every read. Otherwise
	// echo every line after the prompt, so the output reads as a transcript of the session.
	interactive bool
	// afterSay waits until the device has shown what a say sent (sim, where the device renders
	// into the same output); nil returns at once.
	afterSay func(ctx context.Context) error
}

// errQuit is the quit command's way of ending the console.
var errQuit = errors.New("quit")

// run executes the lines of in until quit or ctx is done (it returns nil), or the end of input
// (io.EOF). A line that fails prints an error and the console goes on.
func (c *console) run(ctx context.Context, in io.Reader) error {
	lines := newLineReader(in)
	defer lines.stop()
	for {
		if c.interactive {
			c.out.print(c.prompt)
		}
		line, err := lines.next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			if c.interactive {
				c.out.print("\n")
			}
			return io.EOF
		case ctx.Err() != nil:
			return nil // stopped by a signal: not a failure
		case err != nil:
			return err
		}
		if err := c.exec(ctx, line); errors.Is(err, errQuit) {
			return nil
		} else if err != nil {
			c.out.printf("error: %v\n", err)
		}
	}
}

// exec runs one command line.
func (c *console) exec(ctx context.Context, line string) error {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	if !c.interactive {
		c.out.printf("%s%s\n", c.prompt, line)
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	name, args := cutWord(line)
	switch name {
	case "help", "?":
		c.out.print(c.help)
		return nil
	case "quit", "exit":
		return errQuit
	case "devices":
		return c.devices()
	case "wait":
		return c.wait(ctx, args)
	case "tools":
		return c.tools(args)
	case "call":
		return c.call(ctx, args)
	case "say":
		return c.say(ctx, args)
	}
	return fmt.Errorf("unknown command %q; type help for the commands", name)
}

func (c *console) devices() error {
	devs := c.srv.Devices()
	if len(devs) == 0 {
		c.out.print("no device is registered\n")
		return nil
	}
	var b strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&b, "%s  %d tools  %s  %s\n", d.MAC, len(d.Tools), d.RemoteAddr, d.Header.Get("User-Agent"))
	}
	c.out.print(b.String())
	return nil
}

func (c *console) wait(ctx context.Context, args string) error {
	mac := ""
	if args != "" {
		var err error
		if mac, err = device.NormalizeMAC(args); err != nil {
			return fmt.Errorf("usage: wait [MAC]: %w", err)
		}
	}
	d, err := c.srv.WaitDevice(ctx, mac)
	if err != nil {
		return err
	}
	c.out.printf("%s is registered\n", d.MAC)
	return nil
}

func (c *console) tools(args string) error {
	d, rest, err := c.device(args)
	if err != nil {
		return err
	}
	if rest != "" {
		return errors.New("usage: tools [MAC]")
	}
	c.out.print(formatTools(d.Tools))
	return nil
}

func (c *console) call(ctx context.Context, args string) error {
	d, rest, err := c.device(args)
	if err != nil {
		return err
	}
	tool, input := cutWord(rest)
	if tool == "" {
		return errors.New("usage: call [MAC] TOOL [JSON]")
	}
	if input == "" {
		input = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(input), &v); err != nil {
		return fmt.Errorf("the tool input is not JSON: %w", err)
	}
	resp, err := d.Execute(ctx, tool, json.RawMessage(input))
	if err != nil {
		return err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("printing the response: %w", err)
	}
	c.out.printf("%s\n", b)
	return nil
}

func (c *console) say(ctx context.Context, args string) error {
	d, text, err := c.device(args)
	if err != nil {
		return err
	}
	if text == "" {
		return errors.New("usage: say [MAC] TEXT")
	}
	if err := d.Say(ctx, text); err != nil {
		return err
	}
	if c.afterSay != nil {
		return c.afterSay(ctx)
	}
	c.out.printf("sent to %s\n", d.MAC)
	return nil
}

// device picks the device a command is for: the MAC that starts args, or the only registered
// device when args does not start with a MAC. It returns the rest of args.
func (c *console) device(args string) (*agenttest.Device, string, error) {
	first, rest := cutWord(args)
	if mac, err := device.NormalizeMAC(first); err == nil {
		for _, d := range c.srv.Devices() {
			if d.MAC == mac {
				return d, rest, nil
			}
		}
		return nil, "", fmt.Errorf("no device %s is registered", mac)
	}
	devs := c.srv.Devices()
	switch len(devs) {
	case 0:
		return nil, "", errors.New("no device is registered yet")
	case 1:
		return devs[0], args, nil
	}
	macs := make([]string, len(devs))
	for i, d := range devs {
		macs[i] = d.MAC
	}
	return nil, "", fmt.Errorf("%d devices are registered (%s): put the MAC first", len(devs), strings.Join(macs, ", "))
}

// event shows a change in the registered devices (serve).
func (c *console) event(e agenttest.Event) {
	var msg string
	switch e.Kind {
	case agenttest.Registered:
		msg = fmt.Sprintf("+ %s registered %d tools from %s (%s)", e.Device.MAC, len(e.Device.Tools), e.Device.RemoteAddr, e.Device.Header.Get("User-Agent"))
	case agenttest.Disconnected:
		msg = fmt.Sprintf("- %s disconnected", e.Device.MAC)
	default:
		return
	}
	if c.interactive {
		// The prompt is on screen: write over it, then show it again.
		c.out.printf("\r%s\n%s", msg, c.prompt)
		return
	}
	c.out.printf("%s\n", msg)
}

// cutWord splits s into its first word and the rest, both trimmed.
func cutWord(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// syncWriter serialises writes from the console, the renderer and the hardware panel.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *syncWriter) print(s string) { io.WriteString(w, s) }

func (w *syncWriter) printf(format string, args ...any) { fmt.Fprintf(w, format, args...) }
