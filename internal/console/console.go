// Package console is the console of `devicectl sim` and `devicectl serve`: a line-by-line
// command reader that calls the tools of devices registered with a stand-in agent server
// (device/agenttest) and sends them AI messages, the panel that draws sim's simulated speaker
// and face, and the writer they share so their lines never interleave.
//
// In a terminal (Interactive) the console shows a prompt before each read; otherwise it echoes
// each line after the prompt, so a scripted session's output reads as a transcript.
package console

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

// Console reads commands line by line and runs them against the devices registered with a
// stand-in server: the console of `devicectl sim` and `devicectl serve`.
type Console struct {
	Server *agenttest.Server
	Out    *SyncWriter // shared with everything else that prints, so lines never interleave
	Prompt string      // "sim> ", "serve> "
	Help   string      // the help command's text
	// Interactive: a person types at a terminal; show the prompt before every read. Otherwise
	// echo every line after the prompt, so the output reads as a transcript of the session.
	Interactive bool
	// AfterSay waits until the device has shown what a say sent (sim, where the device renders
	// into the same output); nil returns at once.
	AfterSay func(ctx context.Context) error
}

// errQuit is the quit command's way of ending the console.
var errQuit = errors.New("quit")

// Run executes the lines of in until quit or ctx is done (it returns nil), or the end of input
// (io.EOF). A line that fails prints an error and the console goes on.
func (c *Console) Run(ctx context.Context, in io.Reader) error {
	lines := newLineReader(in)
	defer lines.stop()
	for {
		if c.Interactive {
			c.Out.Print(c.Prompt)
		}
		line, err := lines.next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			if c.Interactive {
				c.Out.Print("\n")
			}
			return io.EOF
		case ctx.Err() != nil:
			return nil // stopped by a signal: not a failure
		case err != nil:
			return err
		}
		if err := c.Exec(ctx, line); errors.Is(err, errQuit) {
			return nil
		} else if err != nil {
			c.Out.Printf("error: %v\n", err)
		}
	}
}

// Exec runs one command line.
func (c *Console) Exec(ctx context.Context, line string) error {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	if !c.Interactive {
		c.Out.Printf("%s%s\n", c.Prompt, line)
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	name, args := cutWord(line)
	switch name {
	case "help", "?":
		c.Out.Print(c.Help)
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

func (c *Console) devices() error {
	devs := c.Server.Devices()
	if len(devs) == 0 {
		c.Out.Print("no device is registered\n")
		return nil
	}
	var b strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&b, "%s  %d tools  %s  %s\n", d.MAC, len(d.Tools), d.RemoteAddr, d.Header.Get("User-Agent"))
	}
	c.Out.Print(b.String())
	return nil
}

func (c *Console) wait(ctx context.Context, args string) error {
	mac := ""
	if args != "" {
		var err error
		if mac, err = device.NormalizeMAC(args); err != nil {
			return fmt.Errorf("usage: wait [MAC]: %w", err)
		}
	}
	d, err := c.Server.WaitDevice(ctx, mac)
	if err != nil {
		return err
	}
	c.Out.Printf("%s is registered\n", d.MAC)
	return nil
}

func (c *Console) tools(args string) error {
	d, rest, err := c.device(args)
	if err != nil {
		return err
	}
	if rest != "" {
		return errors.New("usage: tools [MAC]")
	}
	c.Out.Print(FormatTools(d.Tools))
	return nil
}

func (c *Console) call(ctx context.Context, args string) error {
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
	c.Out.Printf("%s\n", b)
	return nil
}

func (c *Console) say(ctx context.Context, args string) error {
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
	if c.AfterSay != nil {
		return c.AfterSay(ctx)
	}
	c.Out.Printf("sent to %s\n", d.MAC)
	return nil
}

// device picks the device a command is for: the MAC that starts args, or the only registered
// device when args does not start with a MAC. It returns the rest of args.
func (c *Console) device(args string) (*agenttest.Device, string, error) {
	first, rest := cutWord(args)
	if mac, err := device.NormalizeMAC(first); err == nil {
		for _, d := range c.Server.Devices() {
			if d.MAC == mac {
				return d, rest, nil
			}
		}
		return nil, "", fmt.Errorf("no device %s is registered", mac)
	}
	devs := c.Server.Devices()
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

// WatchEvents shows devices as they register and disconnect (serve), until ctx is done or the
// returned stop is called; stop waits for the goroutine that shows them.
func (c *Console) WatchEvents(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case e := <-c.Server.Events():
				c.Event(e)
			case <-ctx.Done():
				return
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// Event shows a change in the registered devices.
func (c *Console) Event(e agenttest.Event) {
	var msg string
	switch e.Kind {
	case agenttest.Registered:
		msg = fmt.Sprintf("+ %s registered %d tools from %s (%s)", e.Device.MAC, len(e.Device.Tools), e.Device.RemoteAddr, e.Device.Header.Get("User-Agent"))
	case agenttest.Disconnected:
		msg = fmt.Sprintf("- %s disconnected", e.Device.MAC)
	default:
		return
	}
	if c.Interactive {
		// The prompt is on screen: write over it, then show it again.
		c.Out.Printf("\r%s\n%s", msg, c.Prompt)
		return
	}
	c.Out.Printf("%s\n", msg)
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
