package command_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/command"
	"github.com/devicectl/devicectl/internal/testing/halconform"
	"github.com/devicectl/devicectl/internal/testing/poll"
)

// The tests run real programs: small shell scripts written to a temporary
// directory. They do not run in parallel, so that no fork can inherit a
// script's file while it is being written (which makes exec fail with
// "text file busy").

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "face.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// recorder is a program that appends its arguments after the first, each
// in brackets, as one line to the file named by its first.
type recorder struct {
	prog, log string
}

func newRecorder(t *testing.T) recorder {
	return recorder{
		prog: script(t, "log=$1\nshift\nprintf '[%s]' \"$@\" >> \"$log\"\nprintf '\\n' >> \"$log\"\n"),
		log:  filepath.Join(t.TempDir(), "log"),
	}
}

// runs returns the lines the recorder wrote, one per run.
func (r recorder) runs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(r.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSetExpressionRunsTheProgram(t *testing.T) {
	ctx := context.Background()
	r := newRecorder(t)
	f, err := command.New(ctx, []string{r.prog, r.log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[idle]"} // New shows the initial expression
	if got := r.runs(t); !equal(got, want) {
		t.Fatalf("after New: runs %q, want %q", got, want)
	}
	for _, e := range hal.Expressions() {
		if err := f.SetExpression(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, "["+string(e)+"]")
		if got, err := f.Expression(ctx); err != nil || got != e {
			t.Errorf("Expression() = %q, %v; want %q", got, err, e)
		}
	}
	if got := r.runs(t); !equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
	if got, want := f.String(), "command:"+r.prog; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestNoShell configures arguments a shell would expand or split: they
// must reach the program exactly as written, with the expression last.
func TestNoShell(t *testing.T) {
	ctx := context.Background()
	r := newRecorder(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	args := []string{"$HOME", "a b", "*", "; touch " + marker, "`touch " + marker + "`", "$(touch " + marker + ")", "'\"", ""}
	argv := append([]string{r.prog, r.log}, args...)
	f, err := command.New(ctx, argv, &command.Options{Expression: hal.Smile})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetExpression(ctx, hal.Cry); err != nil {
		t.Fatal(err)
	}
	line := "[" + strings.Join(args, "][") + "]"
	if got, want := r.runs(t), []string{line + "[smile]", line + "[cry]"}; !equal(got, want) {
		t.Errorf("the program got %q\nwant %q", got, want)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (%v): a shell ran", marker, err)
	}
	if argv[2] != "$HOME" || len(argv) != 2+len(args) {
		t.Errorf("New changed the caller's argv: %q", argv)
	}
}

// TestRejectsUnknownExpressions: a string that is not an expression, such
// as one trying its luck with a shell, never reaches the program.
func TestRejectsUnknownExpressions(t *testing.T) {
	ctx := context.Background()
	r := newRecorder(t)
	marker := filepath.Join(t.TempDir(), "x")
	f, err := command.New(ctx, []string{r.prog, r.log}, &command.Options{Expression: hal.Amazed})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []hal.Expression{"smile; touch " + hal.Expression(marker), "$(touch " + hal.Expression(marker) + ")", "", "Smile", "smile ", "grin"} {
		err := f.SetExpression(ctx, e)
		if !errors.Is(err, hal.ErrUnknownExpression) {
			t.Errorf("SetExpression(%q) = %v, want hal.ErrUnknownExpression", e, err)
		} else if !strings.Contains(err.Error(), f.String()) {
			t.Errorf("SetExpression(%q) = %v: does not name the face", e, err)
		}
	}
	if got, want := r.runs(t), []string{"[amazed]"}; !equal(got, want) {
		t.Errorf("runs %q, want only %q", got, want)
	}
	if got, _ := f.Expression(ctx); got != hal.Amazed {
		t.Errorf("Expression() = %q, want amazed", got)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (%v)", marker, err)
	}
}

func TestFailureReportsStderr(t *testing.T) {
	ctx := context.Background()
	// Accepts idle only; says why it refuses anything else.
	prog := script(t, "[ \"$1\" = idle ] && exit 0\nprintf '  no %s face here \\n\\n' \"$1\" >&2\nexit 3\n")
	f, err := command.New(ctx, []string{prog}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = f.SetExpression(ctx, hal.Cry)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("SetExpression = %v, want an *exec.ExitError with code 3", err)
	}
	for _, want := range []string{f.String() + " cry", "exit status 3", "stderr: no cry face here"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.HasSuffix(err.Error(), " ") || strings.HasSuffix(err.Error(), "\n") {
		t.Errorf("error %q: stderr not trimmed", err)
	}
	if got, _ := f.Expression(ctx); got != hal.Idle {
		t.Errorf("after a refusal: Expression() = %q, want idle (the last accepted)", got)
	}
}

func TestLongStderrKeepsItsEnd(t *testing.T) {
	prog := script(t, "i=0\nwhile [ $i -lt 500 ]; do echo \"noise $i\" >&2; i=$((i+1)); done\necho 'the real reason' >&2\nexit 1\n")
	_, err := command.New(context.Background(), []string{prog}, nil)
	if err == nil {
		t.Fatal("New with a failing program succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "stderr: …") || !strings.HasSuffix(msg, "the real reason") {
		t.Errorf("error does not end with stderr's end after a cut mark: %q", msg)
	}
	if len(msg) > 1300 {
		t.Errorf("error of %d bytes: stderr not bounded", len(msg))
	}
}

func TestTimeout(t *testing.T) {
	ctx := context.Background()
	// Hangs on cry; the sleep it starts keeps stderr open after the shell
	// is killed.
	prog := script(t, "[ \"$1\" = idle ] && exit 0\necho started >&2\nsleep 10\n")
	f, err := command.New(ctx, []string{prog}, &command.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = f.SetExpression(ctx, hal.Cry)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SetExpression = %v, want context.DeadlineExceeded", err)
	}
	for _, want := range []string{"timed out after 300ms", "stderr: started"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Not a measurement: a run that waited for the orphaned sleep would
	// take its full 10 s.
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the run took %v: it waited for the program's child", d)
	}
	if got, _ := f.Expression(ctx); got != hal.Idle {
		t.Errorf("after a timeout: Expression() = %q, want idle", got)
	}
}

func TestCallerContext(t *testing.T) {
	r := newRecorder(t)
	f, err := command.New(context.Background(), []string{r.prog, r.log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	halconform.FaceCancelled(t, f)
	if got, want := r.runs(t), []string{"[idle]"}; !equal(got, want) {
		t.Errorf("runs %q, want %q: a cancelled call ran the program", got, want)
	}

	// A caller that gives up first stops a slow run, long before the face's
	// own timeout.
	slow := script(t, "[ \"$1\" = idle ] && exit 0\nexec sleep 10\n")
	f, err = command.New(context.Background(), []string{slow}, &command.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = f.SetExpression(ctx, hal.Amazed)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("SetExpression with a short context = %v, want it stopped with context.DeadlineExceeded", err)
	}
}

// TestRunsDoNotOverlap holds one run, then checks a second caller waits
// for it, can give up waiting, and runs once it ends.
func TestRunsDoNotOverlap(t *testing.T) {
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	r := newRecorder(t)
	// cry blocks until the test creates release; every run is recorded.
	prog := script(t, "log=$1\nprintf '[%s]\\n' \"$2\" >> \"$log\"\n"+
		"if [ \"$2\" = cry ]; then touch '"+started+"'; while [ ! -e '"+release+"' ]; do sleep 0.02; done; fi\n")
	f, err := command.New(context.Background(), []string{prog, r.log}, &command.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.SetExpression(context.Background(), hal.Cry) }()
	poll.Until(t, "start of the blocking run", func() bool { _, err := os.Stat(started); return err == nil })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := f.SetExpression(ctx, hal.Smile); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting") {
		t.Errorf("SetExpression during another run = %v, want it to give up waiting", err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := f.SetExpression(context.Background(), hal.Smile); err != nil {
		t.Fatal(err)
	}
	if got, want := r.runs(t), []string{"[idle]", "[cry]", "[smile]"}; !equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
}

func TestHaltRunsIdle(t *testing.T) {
	ctx := context.Background()
	r := newRecorder(t)
	f, err := command.New(ctx, []string{r.prog, r.log}, &command.Options{Expression: hal.Cry})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := f.Halt(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := r.runs(t), []string{"[cry]", "[idle]", "[idle]"}; !equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
	if got, _ := f.Expression(ctx); got != hal.Idle {
		t.Errorf("after Halt: Expression() = %q, want idle", got)
	}

	failing := script(t, "[ \"$1\" = cry ] && exit 0\necho 'display unplugged' >&2\nexit 1\n")
	f, err = command.New(ctx, []string{failing}, &command.Options{Expression: hal.Cry})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Halt(); err == nil || !strings.Contains(err.Error(), "display unplugged") {
		t.Errorf("Halt with a failing program = %v, want its stderr", err)
	}
	if got, _ := f.Expression(ctx); got != hal.Cry {
		t.Errorf("after a failed Halt: Expression() = %q, want cry (the last accepted)", got)
	}
}

// TestChildKeepingStderr: a program that succeeds but leaves a child
// holding stderr has still accepted the expression.
func TestChildKeepingStderr(t *testing.T) {
	prog := script(t, "sleep 3 &\nexit 0\n")
	f, err := command.New(context.Background(), []string{prog}, nil)
	if err != nil {
		t.Fatalf("New = %v, want success", err)
	}
	if got, _ := f.Expression(context.Background()); got != hal.Idle {
		t.Errorf("Expression() = %q, want idle", got)
	}
}

func TestNewErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "face.txt")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := script(t, "exit 0\n")
	tests := []struct {
		name    string
		argv    []string
		opts    *command.Options
		want    string
		wantErr error
	}{
		{"no argv", nil, nil, "no program", nil},
		{"empty program", []string{""}, nil, "no program", nil},
		{"missing", []string{filepath.Join(dir, "nothing")}, nil, filepath.Join(dir, "nothing"), nil},
		{"not on PATH", []string{"devicectl-no-such-face"}, nil, "devicectl-no-such-face", exec.ErrNotFound},
		{"not executable", []string{notExec}, nil, notExec, nil},
		{"negative timeout", []string{ok}, &command.Options{Timeout: -time.Second}, "timeout", nil},
		{"expression", []string{ok}, &command.Options{Expression: "grin"}, "grin", hal.ErrUnknownExpression},
	}
	for _, tt := range tests {
		f, err := command.New(ctx, tt.argv, tt.opts)
		switch {
		case err == nil:
			t.Errorf("%s: New = %v, want an error", tt.name, f)
		case !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: error %q does not say %q", tt.name, err, tt.want)
		case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
			t.Errorf("%s: error %q does not wrap %v", tt.name, err, tt.wantErr)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	r := newRecorder(t)
	f, err := command.New(ctx, []string{r.prog, r.log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	halconform.FaceConcurrently(t, f, 3)
	runs := r.runs(t)
	if len(runs) != 1+3*len(hal.Expressions()) {
		t.Fatalf("%d runs recorded, want %d: %q", len(runs), 1+3*len(hal.Expressions()), runs)
	}
	e, _ := f.Expression(ctx)
	if last := runs[len(runs)-1]; last != "["+string(e)+"]" {
		t.Errorf("Expression() = %q, but the program last ran with %s", e, last)
	}
}
