// Package mixerexec is the speaker driven through a command-line mixer (amixer, pactl, wpctl),
// which the ALSA and PulseAudio backends configure with their program and its arguments. Run
// starts the program: no shell, bounded by the caller's context, a fixed locale, errors that
// read as sentences for the agent server. Speaker is the hal.Speaker on a backend's Mixer: one
// operation at a time, every set read back and compared, the same errors for every backend.
package mixerexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// waitDelay bounds how long a killed program's output pipes are drained: a
// child it left behind could otherwise hold them open and the call past
// its context.
const waitDelay = 250 * time.Millisecond

// Run executes command with args (no shell) and returns its standard
// output. Its errors are sentences for the agent server: the exit status
// and the program's own complaint, or the context's error, wrapped. pkg
// is the Debian package to suggest when the program is missing.
func Run(ctx context.Context, log *slog.Logger, pkg, command string, args ...string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.WaitDelay = waitDelay
	// pactl translates "Mute: yes" and amixer its labels; a fixed locale keeps
	// the output in the English the parsers read.
	cmd.Env = append(cmd.Environ(), "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	log.Debug("exec", "argv", cmd.Args, "took", time.Since(start), "err", err)
	if err == nil {
		return stdout.String(), nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", fmt.Errorf("%s was stopped: %w", argv(command, args), ctxErr)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg := oneLine(stderr.String())
		if msg == "" {
			msg = oneLine(stdout.String())
		}
		if msg == "" {
			return "", fmt.Errorf("%s failed: %w", argv(command, args), err)
		}
		return "", fmt.Errorf("%s failed: %w: %s", argv(command, args), err, Clip(msg))
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("cannot run %s (install %s): %w", command, pkg, err)
	}
	return "", fmt.Errorf("cannot run %s: %w", command, err)
}

// argv renders a command line for a message, quoting the arguments a
// reader would otherwise misread.
func argv(command string, args []string) string {
	parts := []string{command}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// oneLine joins a program's trimmed output lines with "; ", so a complaint
// that ALSA spreads over several lines stays one sentence.
func oneLine(s string) string {
	var lines []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// Clip shortens program output quoted in an error message.
func Clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
