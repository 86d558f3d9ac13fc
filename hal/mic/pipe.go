package mic

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/procgroup"
	"github.com/devicectl/devicectl/internal/tail"
)

// PipeOptions configure Start. The zero value is ready to use.
type PipeOptions struct {
	// Name is the part's String; "" is "command:" and the program.
	Name string
	// Buffer is how much audio waits for a slow reader before the oldest is dropped; 0 is 2 s.
	Buffer time.Duration
	Logger *slog.Logger
}

// Pipe is a microphone fed by a program that writes 16 kHz mono s16le PCM to its standard
// output, for as long as it runs.
type Pipe struct {
	name   string
	log    *slog.Logger
	cmd    *exec.Cmd
	cancel context.CancelFunc
	frames chan []int16 // filled by the capture goroutine, closed when it ends
	done   chan struct{}
	err    error // why the capture ended; set before done closes

	mu      sync.Mutex // Read's
	rest    []int16    // what is left of the frame Read took last
	dropped int        // frames dropped for a slow reader, for the log

	haltOnce sync.Once
}

var _ hal.Microphone = (*Pipe)(nil)

// Start starts argv and captures what it writes. The program runs until Halt, in a process
// group of its own so that what it starts stops with it.
func Start(ctx context.Context, argv []string, opts *PipeOptions) (*Pipe, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("mic: no capture program")
	}
	var o PipeOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "command:" + argv[0]
	}
	if o.Buffer <= 0 {
		o.Buffer = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("mic %s: %w", o.Name, err)
	}
	// The capture outlives the caller's context: it ends at Halt.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cmd := exec.CommandContext(cctx, path, argv[1:]...)
	stderr := &tail.Buffer{Max: 1024}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	procgroup.KillGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("mic %s: %w", o.Name, err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("mic %s: %w", o.Name, err)
	}
	p := &Pipe{
		name: o.Name, log: o.Logger.With("component", "mic", "mic", o.Name), cmd: cmd, cancel: cancel,
		frames: make(chan []int16, int(o.Buffer/FrameDuration)+1),
		done:   make(chan struct{}),
	}
	go p.capture(cctx, out, stderr)
	return p, nil
}

// capture reads frames until the program's output ends, then reaps it and records why.
func (p *Pipe) capture(ctx context.Context, out io.Reader, stderr *tail.Buffer) {
	defer close(p.done)
	defer close(p.frames)
	buf := make([]byte, FrameSamples*2)
	var readErr error
	for {
		n, err := io.ReadFull(out, buf)
		if n >= 2 {
			p.push(decode(buf[:n&^1]))
		}
		if err != nil {
			readErr = err
			break
		}
	}
	waitErr := p.cmd.Wait()
	switch {
	case ctx.Err() != nil:
		p.err = fmt.Errorf("mic %s: %w", p.name, hal.ErrHalted)
	case waitErr != nil:
		p.err = fmt.Errorf("mic %s: the capture program ended: %w", p.name, waitErr)
	case errors.Is(readErr, io.EOF) || errors.Is(readErr, io.ErrUnexpectedEOF):
		p.err = fmt.Errorf("mic %s: the capture program ended", p.name)
	default:
		p.err = fmt.Errorf("mic %s: %w", p.name, readErr)
	}
	if s := stderr.String(); s != "" && ctx.Err() == nil {
		p.err = fmt.Errorf("%w; it said: %s", p.err, s)
	}
}

// push hands a frame on, dropping the oldest waiting one when the reader is behind: a live
// microphone must never stall its program, whose own buffer would overflow instead.
func (p *Pipe) push(f []int16) {
	for {
		select {
		case p.frames <- f:
			return
		default:
		}
		select {
		case <-p.frames:
			p.mu.Lock()
			p.dropped++
			if p.dropped == 1 || p.dropped%500 == 0 {
				p.log.Warn("the reader is behind; dropping the oldest audio", "frames_dropped", p.dropped)
			}
			p.mu.Unlock()
		default:
		}
	}
}

func decode(b []byte) []int16 {
	s := make([]int16, len(b)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return s
}

// String returns the part's name, e.g. "pulse:default".
func (p *Pipe) String() string { return p.name }

// Read fills p with the next samples as the program delivers them.
func (p *Pipe) Read(ctx context.Context, buf []int16) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(buf) {
		if len(p.rest) == 0 {
			select {
			case f, ok := <-p.frames:
				if !ok {
					return n, p.err
				}
				p.rest = f
			case <-ctx.Done():
				return n, ctx.Err()
			}
		}
		c := copy(buf[n:], p.rest)
		p.rest = p.rest[c:]
		n += c
	}
	return n, nil
}

// Halt stops the capture program and waits for it.
func (p *Pipe) Halt() error {
	p.haltOnce.Do(p.cancel)
	<-p.done
	return nil
}

// Done is closed once the capture has ended (Halt, or the program died); Err then says why.
func (p *Pipe) Done() <-chan struct{} { return p.done }

// Err says why the capture ended, once Done is closed.
func (p *Pipe) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}
