// Package console is the console of `devicectl sim` and `devicectl serve`: a line-by-line reader
// that says what it is given to the agent (the reply streams in), and whose commands call the tools
// of the devices registered with the agent server's hub and send them AI messages; the panel that
// draws sim's simulated speaker and face; and the writer they share so their lines never
// interleave.
//
// In a terminal (Interactive) the console shows a prompt before each read; otherwise it echoes
// each line after the prompt, so a scripted session's output reads as a transcript.
package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// commandTimeout bounds one console command (a call, a say): long enough for any tool's timeout
// to answer first. A turn has the agent's own deadline.
const commandTimeout = 60 * time.Second

// Server is the agent server a console drives: the devices registered with its hub, and the
// agent that hears what is said.
type Server interface {
	// Devices lists the registered devices, in the order they registered.
	Devices() []Device
	// WaitDevice returns once the device with the MAC ("" any) is registered.
	WaitDevice(ctx context.Context, mac string) (Device, error)
	// Call runs a device's tool and returns the device's JSON-RPC response as received, a result
	// or an error; the error is for a response that never came.
	Call(ctx context.Context, mac, tool string, input json.RawMessage) (json.RawMessage, error)
	// Say sends text to the device as an AI reply: a few chunks, then the final.
	Say(ctx context.Context, mac, text string) error
	// Turn says text to the agent.
	Turn(ctx context.Context, r agent.Request) iter.Seq[agent.Event]
}

// Device is a device as the console shows it.
type Device struct {
	MAC   string
	Tools []tools.Declaration
	Addr  string // where it connected from
}

// Console reads lines and runs them against an agent server: the console of `devicectl sim` and
// `devicectl serve`. A line that is not a command is said to the agent.
type Console struct {
	Server Server
	Out    *SyncWriter // shared with everything else that prints, so lines never interleave
	Prompt string      // "sim> ", "serve> "
	Help   string      // the help command's text
	// Interactive: a person types at a terminal; show the prompt before every read. Otherwise
	// echo every line after the prompt, so the output reads as a transcript of the session.
	Interactive bool
	// ShowReply prints a turn's tool calls and its reply as they stream (serve, where the device
	// is elsewhere). Off, the console prints only a turn's error: the device in the same output
	// shows the reply (sim).
	ShowReply bool
	// AfterReply waits until the device has shown what a say or a turn sent (sim, where the device
	// renders into the same output); nil returns at once.
	AfterReply func(ctx context.Context) error
	// UserID is whose memories the console's turns use; "" the default user.
	UserID string
	// SessionID makes the console's turns one conversation; "" a fresh one each turn.
	SessionID string

	editing atomic.Bool // Run is editing lines at a terminal: Event need not redraw the prompt
}

// errQuit is the quit command's way of ending the console.
var errQuit = errors.New("quit")

// Run executes the lines of in until quit or ctx is done (it returns nil), or the end of input
// (io.EOF). A line that fails prints an error and the console goes on.
//
// Interactive, with both in and Out's writer a terminal, the line is edited as it is typed:
// arrows, the lines typed before (up, down) and the usual Emacs keys, see editor.
func (c *Console) Run(ctx context.Context, in io.Reader) (err error) {
	var ed *editor
	if c.Interactive {
		if ed, err = newEditor(in, c.Out, c.Prompt); err != nil {
			return err
		}
	}
	var lines *lineReader
	if ed != nil {
		lines = newLineFuncReader(ed.readLine)
		c.editing.Store(true)
		defer func() {
			c.editing.Store(false)
			err = errors.Join(err, ed.close())
		}()
	} else {
		lines = newLineReader(in)
	}
	defer lines.stop()
	// endLine ends the line the prompt is on, so what the shell prints next starts a line of
	// its own; the terminal gets its settings back first, so the prompt is not drawn again.
	endLine := func() {
		if ed != nil {
			c.editing.Store(false)
			err = errors.Join(err, ed.close())
		}
		if c.Interactive {
			c.Out.Print("\n")
		}
	}
	for {
		if c.Interactive && ed == nil {
			c.Out.Print(c.Prompt)
		}
		line, rerr := lines.next(ctx)
		switch {
		case errors.Is(rerr, io.EOF):
			endLine()
			if err != nil {
				return errors.Join(io.EOF, err)
			}
			return io.EOF
		case ctx.Err() != nil:
			endLine()
			return err // stopped by a signal: not a failure
		case rerr != nil:
			return rerr
		}
		xerr := c.Exec(ctx, line)
		switch {
		case errors.Is(xerr, errQuit):
			return nil
		case ctx.Err() != nil:
			// Interrupted in the middle of a command: that the command was cancelled is no news.
			endLine()
			return err
		case xerr != nil:
			c.Out.Printf("error: %s\n", term.Sanitize(xerr.Error())) // it may quote a peer
		}
	}
}

// Exec runs one line: a command, or else text said to the agent.
func (c *Console) Exec(ctx context.Context, line string) error {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	if !c.Interactive {
		c.Out.Printf("%s%s\n", c.Prompt, line)
	}
	name, args := cutWord(line)
	if name != "say" && name != "call" && name != "wait" {
		// A turn has the agent's deadline; the other commands answer at once.
		switch name {
		case "help", "?":
			c.Out.Print(c.Help)
			return nil
		case "quit", "exit":
			return errQuit
		case "devices":
			return c.devices()
		case "tools":
			return c.tools(args)
		case "forget":
			return c.forget(ctx, args)
		}
		return c.turn(ctx, line)
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	switch name {
	case "wait":
		return c.wait(ctx, args)
	case "call":
		return c.call(ctx, args)
	}
	return c.say(ctx, args)
}

// Forgetter is a Server whose hub binds each MAC to the Client-Id that registered it first
// (agent/hub): forget frees one for a device with another Client-Id.
type Forgetter interface {
	// Forget removes mac's binding and reports whether there was one.
	Forget(ctx context.Context, mac string) (bool, error)
}

func (c *Console) forget(ctx context.Context, args string) error {
	f, ok := c.Server.(Forgetter)
	if !ok {
		return errors.New("this server binds no MAC to a client")
	}
	mac, err := protocol.ParseMAC(args)
	if err != nil {
		return fmt.Errorf("usage: forget MAC: %w", err)
	}
	was, err := f.Forget(ctx, mac)
	if err != nil {
		return err
	}
	if !was {
		c.Out.Printf("%s was bound to no client\n", mac)
		return nil
	}
	c.Out.Printf("%s is free: the next device to register it is bound to it\n", mac)
	return nil
}

func (c *Console) devices() error {
	devs := c.Server.Devices()
	if len(devs) == 0 {
		c.Out.Print("no device is registered\n")
		return nil
	}
	var b strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&b, "%s  %d tools  %s\n", oneLine(d.MAC), len(d.Tools), oneLine(d.Addr))
	}
	c.Out.Print(b.String())
	return nil
}

func (c *Console) wait(ctx context.Context, args string) error {
	mac := ""
	if args != "" {
		var err error
		if mac, err = protocol.ParseMAC(args); err != nil {
			return fmt.Errorf("usage: wait [MAC]: %w", err)
		}
	}
	d, err := c.Server.WaitDevice(ctx, mac)
	if err != nil {
		return err
	}
	c.Out.Printf("%s is registered\n", oneLine(d.MAC))
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

// call prints the device's response as received: the result, or the error with its code,
// message and data.details.
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
	resp, err := c.Server.Call(ctx, d.MAC, tool, json.RawMessage(input))
	if err != nil {
		return err
	}
	c.Out.Printf("%s\n", oneLine(compact(resp)))
	return nil
}

// FormatToolError writes a tool's error as the device protocol does: code, message and
// data.details.
func FormatToolError(te *agent.ToolError) string {
	type data struct {
		Details string `json:"details"`
	}
	v := struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    *data  `json:"data,omitempty"`
	}{Code: te.Code, Message: te.Message}
	if te.Details != "" {
		v.Data = &data{te.Details}
	}
	return marshal(map[string]any{"error": v})
}

func (c *Console) say(ctx context.Context, args string) error {
	d, text, err := c.device(args)
	if err != nil {
		return err
	}
	if text == "" {
		return errors.New("usage: say [MAC] TEXT")
	}
	if err := c.Server.Say(ctx, d.MAC, text); err != nil {
		return err
	}
	if c.AfterReply != nil {
		return c.AfterReply(ctx)
	}
	c.Out.Printf("sent to %s\n", oneLine(d.MAC))
	return nil
}

// turn says text to the agent, on the device that starts it (a MAC) or the only one. Shown
// (ShowReply), the tool calls are lines of their own and the reply streams onto one line.
func (c *Console) turn(ctx context.Context, text string) error {
	mac := ""
	if first, rest := cutWord(text); rest != "" {
		if m, err := protocol.ParseMAC(first); err == nil {
			mac, text = m, rest
		}
	}
	inReply := false  // a chunk was printed and its line not ended
	streamed := false // a chunk was printed: the final repeats it
	endLine := func() {
		if inReply {
			c.Out.Print("\n")
			inReply = false
		}
	}
	req := agent.Request{Text: text, MAC: mac, UserID: c.UserID, SessionID: c.SessionID}
	for ev := range c.Server.Turn(ctx, req) {
		switch ev.Kind {
		case agent.EventError:
			endLine()
			var choice *agent.DeviceChoiceError
			if errors.As(ev.Err, &choice) && choice.Asked == "" && len(choice.MACs) > 0 {
				// The agent's own words name the A2A field; at the console a MAC starts the line.
				return fmt.Errorf("%d devices are registered (%s): start the line with the MAC of the one to talk to, e.g. %s %s",
					len(choice.MACs), someMACs(choice.MACs), choice.MACs[0], text)
			}
			return ev.Err
		case agent.EventFinal:
			if c.ShowReply {
				if !streamed {
					c.Out.Print(term.Sanitize(ev.Text)) // a reply that did not stream
					inReply = true
				}
				endLine()
			}
			if c.AfterReply != nil {
				return c.AfterReply(ctx)
			}
			return nil
		}
		if !c.ShowReply {
			continue
		}
		switch ev.Kind {
		case agent.EventChunk:
			c.Out.Print(term.Sanitize(ev.Text))
			inReply, streamed = true, true
		case agent.EventToolCall:
			endLine()
			c.Out.Printf("→ %s %s\n", oneLine(ev.Tool), oneLine(compact(ev.Input)))
		case agent.EventToolResult:
			endLine()
			var te *agent.ToolError
			switch {
			case errors.As(ev.Err, &te):
				c.Out.Printf("← %s %s\n", oneLine(ev.Tool), oneLine(FormatToolError(te)))
			case ev.Err != nil:
				c.Out.Printf("← %s error: %s\n", oneLine(ev.Tool), oneLine(ev.Err.Error()))
			default:
				c.Out.Printf("← %s %s\n", oneLine(ev.Tool), oneLine(compact(ev.Result)))
			}
		}
	}
	endLine()
	return errors.New("the turn ended without a reply")
}

// device picks the device a command is for: the MAC that starts args, or the only registered
// device when args does not start with a MAC. It returns the rest of args.
func (c *Console) device(args string) (Device, string, error) {
	first, rest := cutWord(args)
	if mac, err := protocol.ParseMAC(first); err == nil {
		for _, d := range c.Server.Devices() {
			if d.MAC == mac {
				return d, rest, nil
			}
		}
		return Device{}, "", fmt.Errorf("no device %s is registered", mac)
	}
	devs := c.Server.Devices()
	switch len(devs) {
	case 0:
		return Device{}, "", errors.New("no device is registered yet")
	case 1:
		return devs[0], args, nil
	}
	macs := make([]string, len(devs))
	for i, d := range devs {
		macs[i] = d.MAC
	}
	return Device{}, "", fmt.Errorf("%d devices are registered (%s): put the MAC first", len(devs), someMACs(macs))
}

// shownMACs is how many MACs an error names: enough to copy one from; devices lists them all.
const shownMACs = 3

// someMACs names the first few devices and counts the rest.
func someMACs(macs []string) string {
	shown := macs[:min(len(macs), shownMACs)]
	s := strings.Join(shown, ", ")
	if more := len(macs) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more; devices lists them", more)
	}
	return s
}

// DeviceEventKind says whether a device came or went.
type DeviceEventKind uint8

// The device events the console shows.
const (
	Registered DeviceEventKind = iota + 1
	Disconnected
)

// Event shows a device that registered or disconnected (serve).
func (c *Console) Event(kind DeviceEventKind, d Device) {
	var msg string
	switch kind {
	case Registered:
		msg = fmt.Sprintf("+ %s registered %d tools from %s", oneLine(d.MAC), len(d.Tools), oneLine(d.Addr))
	case Disconnected:
		msg = fmt.Sprintf("- %s disconnected", oneLine(d.MAC))
	default:
		return
	}
	c.notice(msg)
}

// Heard shows what a person said to a device (serve): source "voice" is what its microphone
// heard, anything else was typed on it.
func (c *Console) Heard(mac, text, source string) {
	verb := "said"
	if source == protocol.SourceVoice {
		verb = "heard"
	}
	c.notice(fmt.Sprintf("%s %s: %s", oneLine(mac), verb, oneLine(text)))
}

// notice prints a line of its own, between what the console is doing.
func (c *Console) notice(msg string) {
	if c.Interactive && !c.editing.Load() {
		// The prompt is on screen: write over it, then show it again. (The line editor does
		// that itself, keeping what was typed.)
		c.Out.Printf("\r%s\n%s", msg, c.Prompt)
		return
	}
	c.Out.Printf("%s\n", msg)
}

// oneLine is a peer's text (a MAC, a tool's name, its answer) made safe to print on one line of a
// terminal: a control character or an escape sequence in it is shown escaped, see term.Sanitize.
// Every line the console prints that holds a peer's text goes through it, term.Sanitize (text of
// many lines: replies, errors) or FormatTools.
func oneLine(s string) string { return term.SanitizeLine(s) }

// compact writes JSON on one line, its keys in their order; what is not JSON is written as it is.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// marshal writes v as JSON on one line, without escaping <, > and & (people read this).
func marshal(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
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
