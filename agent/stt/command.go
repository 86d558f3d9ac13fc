package stt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/devicectl/devicectl/internal/wav"
)

// The words a command's argv may hold, replaced before it runs.
const (
	ArgWAV  = "{wav}"  // a file holding the utterance as a WAV; without it, the WAV comes on stdin
	ArgJSGF = "{jsgf}" // a file holding Grammar(the device's tools)
)

// PocketSphinx is the program of the packaged default command.
const PocketSphinx = "pocketsphinx_continuous"

// PocketSphinxArgv is the default command where PocketSphinx is on PATH: Debian's
// pocketsphinx_continuous with its US English model, listening for the grammar. It reads a file
// (-infile), not stdin. -logfn keeps its log out of the text.
var PocketSphinxArgv = []string{PocketSphinx, "-infile", ArgWAV, "-jsgf", ArgJSGF, "-logfn", os.DevNull}

// CommandOptions configure a Command. New copies them.
type CommandOptions struct {
	// Argv is the program and its arguments; {wav} and {jsgf} are replaced (ArgWAV, ArgJSGF).
	Argv []string
	// Key is the config key Argv came from, named in errors; "" means agent.stt.command.
	Key string
	// Parallel bounds the programs running at once; 0 means the number of CPUs.
	Parallel int
	// MaxOutput bounds what is read of stdout and stderr, each; 0 means 64 KiB.
	MaxOutput int
	// Dict is the program's pronunciation dictionary, when it has one: the grammar keeps only
	// the expressions it can say. "" keeps them all.
	Dict string
}

// Command runs a program per utterance. See the package documentation.
type Command struct {
	o    CommandOptions
	sem  chan struct{}
	dict *Dictionary // nil: every word is kept
}

// NewCommand checks o: Argv must name a program, found on PATH when it has no slash.
func NewCommand(o *CommandOptions) (*Command, error) {
	c := &Command{}
	if o != nil {
		c.o = *o
		c.o.Argv = slices.Clone(o.Argv)
	}
	if c.o.Key == "" {
		c.o.Key = "agent.stt.command"
	}
	if c.o.Parallel <= 0 {
		c.o.Parallel = runtime.NumCPU()
	}
	if c.o.MaxOutput <= 0 {
		c.o.MaxOutput = 64 << 10
	}
	if len(c.o.Argv) == 0 || c.o.Argv[0] == "" {
		return nil, fmt.Errorf("%s is empty: name a program that reads a WAV and prints the text", c.o.Key)
	}
	if _, err := exec.LookPath(c.o.Argv[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", c.o.Key, err)
	}
	c.sem = make(chan struct{}, c.o.Parallel)
	if c.o.Dict != "" {
		c.dict = &Dictionary{Path: c.o.Dict}
	}
	return c, nil
}

func (c *Command) String() string { return "command " + filepath.Base(c.o.Argv[0]) }

// Transcribe runs the program on a and returns what it printed, its lines joined by spaces.
func (c *Command) Transcribe(ctx context.Context, a Audio) (string, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("%s: waiting for a turn to run: %w", c, context.Cause(ctx))
	}
	defer func() { <-c.sem }()

	var wavBuf bytes.Buffer
	if err := wav.Encode(&wavBuf, wav.Format{Rate: a.Rate, Channels: 1}, a.Samples); err != nil {
		return "", fmt.Errorf("%s: %w", c, err)
	}
	argv := slices.Clone(c.o.Argv)
	stdin := true
	var dir string
	for i, arg := range argv {
		if arg != ArgWAV && arg != ArgJSGF {
			continue
		}
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "devicectl-stt-"); err != nil {
				return "", fmt.Errorf("%s: %w", c, err)
			}
			defer os.RemoveAll(dir)
		}
		name, data := "utterance.wav", wavBuf.Bytes()
		if arg == ArgJSGF {
			name, data = "commands.gram", c.grammar(a)
		} else {
			stdin = false
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", fmt.Errorf("%s: %w", c, err)
		}
		argv[i] = path
	}
	runCtx, kill := context.WithCancel(ctx)
	defer kill()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	// Its own process group, killed whole: a shell's children must not outlive it holding
	// the pipes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if stdin {
		cmd.Stdin = &wavBuf
	}
	stdout := &capped{max: c.o.MaxOutput, kill: kill}
	stderr := &capped{max: c.o.MaxOutput, kill: kill}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if stdout.over {
		return "", fmt.Errorf("%s (%s): it printed more than %d bytes", c, c.o.Key, c.o.MaxOutput)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w", c, context.Cause(ctx))
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:] // the last line says why, usually
		}
		if msg != "" {
			return "", fmt.Errorf("%s (%s): %w: %s", c, c.o.Key, err, msg)
		}
		return "", fmt.Errorf("%s (%s): %w", c, c.o.Key, err)
	}
	return strings.Join(strings.Fields(stdout.String()), " "), nil
}

var errTooMuch = errors.New("too much output")

// capped keeps the first max bytes written to it.
type capped struct {
	buf  bytes.Buffer // not embedded: io.Copy would use its ReadFrom and read without bound
	max  int
	over bool
	kill func() // stops the program: a pipe nobody reads would hold it forever
}

func (w *capped) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); len(p) > room {
		w.over = true
		w.buf.Write(p[:max(room, 0)])
		w.kill()
		return 0, errTooMuch
	}
	return w.buf.Write(p)
}

func (w *capped) String() string { return w.buf.String() }

func (c *Command) grammar(a Audio) []byte {
	if c.dict == nil {
		return Grammar(a.Tools)
	}
	return GrammarKnown(a.Tools, c.dict.Has)
}

// NewPocketSphinx returns the packaged default, PocketSphinxArgv, or an error when
// pocketsphinx_continuous is not on PATH.
func NewPocketSphinx() (*Command, error) {
	o := &CommandOptions{Argv: PocketSphinxArgv}
	if _, err := os.Stat(PocketSphinxDict); err == nil {
		o.Dict = PocketSphinxDict
	}
	return NewCommand(o)
}
