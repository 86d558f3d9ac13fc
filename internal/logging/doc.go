// Package logging holds the log/slog pieces the devicectl daemon assembles at start-up: output
// formats, the systemd journal convention, secret redaction, and a handler that a configuration
// reload can replace.
//
// The pieces stack from the logger down to the file:
//
//	slog.Logger → Repeats → Switch → NewHandler(format) → Redactor → os.Stderr
//
// # One record, one Write
//
// Every handler NewHandler returns writes each record as one line with a single Write call, and
// derived loggers (With, WithGroup) share the lock around that call. Two things depend on it:
// journald reads stderr line by line, so a line assembled from several writes could be split by
// another writer's bytes; and the Redactor scrubs each Write as a whole, so a secret cannot be
// split across two writes and slip through half on each side.
//
// # Formats
//
// "text" and "json" are slog's own TextHandler and JSONHandler, for machines. "human" is for a
// person at a terminal:
//
//	15:04:05.000 INFO  agent: registered server=ws://x mac=AA-BB-CC-DD-EE-FF tools=3
//
// Each part of devicectl logs through a logger made with With("component", name); the human
// format lifts that attribute out of the list and shows it before the message, which is what a
// reader scans for first. Values are quoted only when they would otherwise be ambiguous (spaces,
// '=', '"', control characters, empty), and a message with a newline is escaped rather than
// allowed to start a second line that would look like a record of its own.
//
// # The journal
//
// Under systemd, stderr is often a stream connected to journald, which timestamps every line
// itself and reads a "<N>" prefix (sd-daemon(3)) as the syslog priority of the line. Options.Journal
// adds that prefix and drops the record's time; IsJournal tells whether stderr really is that
// stream, from the JOURNAL_STREAM variable systemd sets, rather than merely running under
// systemd with stderr redirected somewhere else.
//
// # Secrets
//
// A Redactor sits between the handler and the file and replaces every secret it was told about
// with "[redacted]", whatever logged it: an attribute, an error message quoting a request, a
// debug dump. It works on the formatted bytes rather than on attributes because secrets leak
// through values nobody thought of marking. For the same reason it also matches the forms a secret
// takes once a handler has escaped it (Go quoting, JSON), which differ from the raw form when the
// secret contains a quote, a backslash or a control character. Secrets are usually learnt after
// the logger exists (a token read from a file named in the configuration), so Add may be called at
// any time.
//
// # Floods
//
// One warning per dropped event or per refused request can write tens of thousands of lines in
// seconds; journald then rate-limits the unit and drops lines whatever they say. Repeats, in front
// of everything, groups records of warn level and above by level and message (not attributes,
// which carry a counter or an address that differs each time): of each group it writes the first
// three of a 10 s window, counts the rest, and when the window ends writes one summary, the last
// record counted with suppressed=N within=10s. The lines written plus the suppressed counts add
// up to every record. Its timers are its own; Close writes the summaries still due.
//
// # Reload
//
// A Switch is the handler the daemon's loggers are built on. Components keep the loggers they
// derived with With and WithGroup for the life of the process; on SIGHUP the daemon builds a handler
// for the new configuration and calls Set, and every one of those loggers follows, with its
// attributes and groups re-applied to the new target.
package logging
