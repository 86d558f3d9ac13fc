package logging_test

import (
	"errors"
	"log/slog"
	"os"

	"github.com/devicectl/devicectl/internal/logging"
)

// Example wires the pieces as the daemon does: a Switch over a handler over a Redactor. Journal
// is on so the output has no time stamps to vary.
func Example() {
	redactor := logging.NewRedactor(os.Stdout)
	sw := logging.NewSwitch(logging.NewHandler(redactor, &logging.Options{Format: "human", Journal: true}))
	log := slog.New(sw).With("component", "agent")

	// The token is learnt after the logger exists, from the configuration.
	redactor.Add("s3cr3t-t0ken")
	log.Info("registered", "server", "ws://x", "auth", "Bearer s3cr3t-t0ken", "tools", 3)

	// SIGHUP: the new configuration asks for JSON at warn level.
	sw.Set(logging.NewHandler(redactor, &logging.Options{Format: "json", Journal: true, Level: slog.LevelWarn}))
	log.Info("not shown")
	log.Warn("reconnecting", "err", errors.New(`dial: token "s3cr3t-t0ken" refused`))

	// Output:
	// <6>INFO  agent: registered server=ws://x auth="Bearer [redacted]" tools=3
	// <4>{"level":"WARN","msg":"reconnecting","component":"agent","err":"dial: token \"[redacted]\" refused"}
}

// ExampleIsJournal chooses the output for stderr at start-up.
func ExampleIsJournal() {
	o := &logging.Options{Format: "human", Color: true}
	if logging.IsJournal(os.Stderr, os.Getenv) {
		// journald stamps lines and has no terminal to colour.
		o.Journal, o.Color = true, false
	}
	slog.SetDefault(slog.New(logging.NewHandler(os.Stderr, o)))
}
