package command

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/procgroup"
	"github.com/devicectl/devicectl/internal/tail"
)

// DefaultTimeout bounds a run when Options do not.
const DefaultTimeout = 5 * time.Second

// waitDelay is how long a run waits, after the program ended or was
// killed, for its stderr to close: a child the program left running may
// hold it open for ever.
const waitDelay = time.Second

// maxStderr is how much of the end of a program's stderr an error quotes.
const maxStderr = 1024

// Options configure New. The zero value is ready to use.
type Options struct {
	// Timeout bounds each run of the program; 0 means DefaultTimeout.
	Timeout time.Duration
	// Expression is the one New runs the program with. "" means hal.Idle.
	Expression hal.Expression
}

// Face is a hal.Face that runs a program to show each expression.
type Face struct {
	name    string
	path    string   // the program, as found
	args    []string // the configured arguments after the program
	timeout time.Duration

	// slot holds a token while the program runs: runs must not overlap,
	// and waiting for one must give way to the caller's context, which a
	// mutex cannot.
	slot chan struct{}
	expr hal.Shown
}

var _ hal.Face = (*Face)(nil)

// New returns a face that runs argv (program first) with the expression
// appended, after running it once with the initial expression. opts may be
// nil.
func New(ctx context.Context, argv []string, opts *Options) (*Face, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("command: no program to run")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Timeout < 0:
		return nil, fmt.Errorf("command: timeout %v: want a positive duration, or 0 for %v", o.Timeout, DefaultTimeout)
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	}
	if o.Expression == "" {
		o.Expression = hal.Idle
	}
	if !o.Expression.Valid() {
		return nil, fmt.Errorf("command: initial expression %q: %w", o.Expression, hal.ErrUnknownExpression)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("command: program %q: %w", argv[0], err)
	}
	f := &Face{
		name:    "command:" + argv[0],
		path:    path,
		args:    slices.Clone(argv[1:]),
		timeout: o.Timeout,
		slot:    make(chan struct{}, 1),
	}
	if err := f.SetExpression(ctx, o.Expression); err != nil {
		return nil, err
	}
	return f, nil
}

// String returns "command:" and the program as configured.
func (f *Face) String() string { return f.name }

// Halt runs the program with idle.
func (f *Face) Halt() error {
	ctx := context.Background() // Halt has none; the timeout bounds it
	return f.SetExpression(ctx, hal.Idle)
}

// SetExpression runs the program with e, which must be Valid, and records
// e if the program succeeds.
func (f *Face) SetExpression(ctx context.Context, e hal.Expression) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.Valid() {
		return fmt.Errorf("%s: expression %q: %w", f, e, hal.ErrUnknownExpression)
	}
	select {
	case f.slot <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s %s: waiting for the previous run: %w", f, e, ctx.Err())
	}
	defer func() { <-f.slot }()
	if err := f.run(ctx, e); err != nil {
		return err
	}
	f.expr.Set(e)
	return nil
}

// Expression returns the last expression the program accepted.
func (f *Face) Expression(ctx context.Context) (hal.Expression, error) {
	return f.expr.Get(ctx)
}

func (f *Face) run(ctx context.Context, e hal.Expression) error {
	rctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, f.path, append(slices.Clip(f.args), string(e))...)
	stderr := tail.Buffer{Max: maxStderr}
	cmd.Stderr = &stderr
	cmd.WaitDelay = waitDelay
	procgroup.KillGroup(cmd) // a timeout stops what the program started, too
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState.Success() {
		err = nil // it succeeded; a child it left behind holds stderr
	}
	if err == nil {
		return nil
	}
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("stopped: %w", ctx.Err())
	case rctx.Err() != nil:
		err = fmt.Errorf("timed out after %v: %w", f.timeout, rctx.Err())
	}
	if s := stderr.String(); s != "" {
		return fmt.Errorf("%s %s: %w; stderr: %s", f, e, err, s)
	}
	return fmt.Errorf("%s %s: %w", f, e, err)
}
