package speech

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/devicectl/devicectl/internal/procgroup"
	"github.com/devicectl/devicectl/internal/tail"
)

// waitDelay bounds how long a killed command's leftover children may hold its stderr pipe open
// before Wait gives up on them; without it one stray grandchild would stall the queue for good.
const waitDelay = 2 * time.Second

// Speaker speaks utterances one at a time, in the order given, by running its command once per
// utterance. Speak never blocks; Interrupt cuts off what is being said. It is safe for
// concurrent use. The zero value is not usable; call NewSpeaker.
type Speaker struct {
	name  string   // argv[0] as configured, for String and logs
	path  string   // argv[0] resolved at start-up
	args  []string // argv[1:]
	limit int
	log   *slog.Logger

	wake chan struct{} // capacity 1: work was queued or Close was called
	done chan struct{} // closed when the worker has returned

	mu      sync.Mutex
	queue   []string
	cur     *process      // the utterance being spoken, nil between utterances
	idle    chan struct{} // closed while nothing is queued or being spoken
	isIdle  bool
	closed  bool
	dropped int // utterances dropped because the queue was full, for the log
}

// process is one run of the command.
type process struct {
	cancel context.CancelFunc
	exited chan struct{} // closed once the command has been waited for
}

// NewSpeaker returns a Speaker running opts.Command (or DefaultCommand(opts.Lang) if it is
// empty), and starts the goroutine that runs it; Close stops that goroutine. A program that is
// not found is an error naming it, wrapping exec.ErrNotFound, so a misconfigured device fails at
// start-up instead of staying silent.
func NewSpeaker(opts *Options) (*Speaker, error) {
	o := opts.withDefaults()
	argv := o.Command
	if len(argv) == 0 {
		var err error
		if argv, err = DefaultCommand(o.Lang); err != nil {
			return nil, err
		}
	}
	if argv[0] == "" {
		return nil, errors.New("speech: empty program name in command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("speech: command %q: %w", argv[0], err)
	}
	s := &Speaker{
		name:   argv[0],
		path:   path,
		args:   argv[1:],
		limit:  o.QueueSize,
		log:    o.Logger.With("component", "speech", "command", argv[0]),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		idle:   make(chan struct{}),
		isIdle: true,
	}
	close(s.idle)
	go s.run()
	return s, nil
}

// String returns "speech(<program>)".
func (s *Speaker) String() string { return "speech(" + s.name + ")" }

// Speak queues text to be said after what is already queued, and returns at once. Blank text is
// ignored, as is everything after Close. If QueueSize utterances are already waiting, the oldest
// is dropped (and logged): when speech falls that far behind, the newest text matters most.
func (s *Speaker) Speak(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.log.Debug("speaker closed; not speaking", "chars", len(text))
		return
	}
	if len(s.queue) >= s.limit {
		s.queue[0] = ""
		s.queue = s.queue[1:]
		s.dropped++
		s.log.Warn("speech queue full; dropped the oldest utterance",
			"queue", s.limit, "dropped_total", s.dropped)
	}
	s.queue = append(s.queue, text)
	if s.isIdle {
		s.idle = make(chan struct{})
		s.isIdle = false
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending; the worker will see this text too
	}
}

// Interrupt kills the utterance being spoken and drops the queued ones, without waiting for the
// command to exit. Text spoken after it is said as usual; this is how a new reply silences the
// old one.
func (s *Speaker) Interrupt() {
	s.interrupt()
}

func (s *Speaker) interrupt() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.queue); n > 0 {
		s.log.Debug("dropping queued utterances", "count", n)
	}
	clear(s.queue)
	s.queue = s.queue[:0]
	p := s.cur
	if p != nil {
		p.cancel()
	}
	return p
}

// Speaking reports whether something is being said or waits to be.
func (s *Speaker) Speaking() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.isIdle
}

// Halt is Interrupt that returns only once the command has been killed and waited for, so the
// device is silent when it returns. The Speaker stays usable. It always returns nil.
func (s *Speaker) Halt() error {
	if p := s.interrupt(); p != nil {
		<-p.exited
	}
	return nil
}

// Wait blocks until everything queued has been spoken (or dropped) and no command runs, or until
// ctx is done.
func (s *Speaker) Wait(ctx context.Context) error {
	s.mu.Lock()
	idle := s.idle
	s.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops speaking, as Halt, and waits for the Speaker's goroutine to return. Later calls to
// Speak are ignored. It is safe to call more than once and always returns nil.
func (s *Speaker) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.interrupt()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	return nil
}

// run is the Speaker's one goroutine: it says the queued utterances in order until Close.
func (s *Speaker) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if s.closed || len(s.queue) == 0 {
			// Closed or not, nothing is left to say: release Wait.
			if !s.isIdle {
				close(s.idle)
				s.isIdle = true
			}
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return
			}
			<-s.wake
			continue
		}
		text := s.queue[0]
		s.queue[0] = ""
		s.queue = s.queue[1:]
		ctx, cancel := context.WithCancel(context.Background())
		p := &process{cancel: cancel, exited: make(chan struct{})}
		s.cur = p
		s.mu.Unlock()

		s.say(ctx, text)
		cancel()

		s.mu.Lock()
		s.cur = nil
		close(p.exited)
		s.mu.Unlock()
	}
}

// say runs the command once with text on its stdin. Failures are logged, never returned: one bad
// utterance (or a missing sound card) must not stop the agent, nor the next utterance.
func (s *Speaker) say(ctx context.Context, text string) {
	if !strings.HasSuffix(text, "\n") {
		// Line-oriented synthesizers (piper, espeak-ng reading stdin) may hold back a last line
		// that lacks its newline.
		text += "\n"
	}
	stderr := &tail.Buffer{Max: 512}
	cmd := exec.CommandContext(ctx, s.path, s.args...)
	cmd.Args[0] = s.name
	cmd.Stdin = strings.NewReader(text)
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay
	procgroup.KillGroup(cmd)

	start := time.Now()
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		s.log.Debug("utterance interrupted", "chars", len(text), "after", time.Since(start))
	case err != nil:
		s.log.Warn("speech command failed", "err", err, "stderr", stderr.String())
	default:
		s.log.Debug("utterance spoken", "chars", len(text), "took", time.Since(start))
	}
}
