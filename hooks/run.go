package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/devicectl/devicectl/internal/procgroup"
	"github.com/devicectl/devicectl/internal/tail"
)

const (
	// prefix starts the name of every variable the Runner sets.
	prefix = "DEVICECTL_"

	// maxEnvValue is the longest value put in one environment variable. Linux refuses an exec
	// whose environment holds a string over 128 KiB (MAX_ARG_STRLEN), and a tool's result can be
	// that long; stdin has the whole value.
	maxEnvValue = 16 << 10

	// waitDelay is how long a run waits, once the hook has exited or been killed, for its output
	// and stdin pipes to be let go: a process it left running that escaped its process group
	// (setsid) may hold them for ever, and the queue must move on.
	waitDelay = time.Second

	// maxOutput is how much of the end of a hook's output a failure's log quotes.
	maxOutput = 1024

	// timeLayout is RFC 3339 in UTC with all nine digits of the nanoseconds, so that times sort
	// as strings and have a fixed width (time.RFC3339Nano drops trailing zeros).
	timeLayout = "2006-01-02T15:04:05.000000000Z07:00"
)

// run runs e's hook once and logs how it went. It reports whether the hook was killed because
// Close stopped waiting. A failure is logged and nothing else: one bad hook must neither stop
// the agent nor the hooks after it.
func (r *Runner) run(e event) (killed bool) {
	h := r.hooks[e.ev]
	env, stdin := r.prepare(e)
	ctx, cancel := context.WithTimeout(r.stop, r.timeout)
	defer cancel()

	out := tail.Buffer{Max: maxOutput} // stdout and stderr both: the same writer makes exec use one pipe for the two
	cmd := exec.CommandContext(ctx, h.path, h.args...)
	cmd.Args[0] = h.name
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = waitDelay
	procgroup.KillGroup(cmd) // a timeout stops what the hook started, too

	start := time.Now()
	// Whatever the hook left in its group is killed when it exits: children it put in the
	// background must not pile up, one lot per event.
	err := procgroup.Run(cmd)
	took := time.Since(start)
	log := r.log.With("event", e.ev, "program", h.name)

	var status string
	switch {
	case err == nil:
		log.Debug("hook ran", "duration", took)
		return false
	case cmd.ProcessState != nil && cmd.ProcessState.Success():
		// It exited 0, so it did its work; but a process that escaped its group held its output
		// or stdin past waitDelay (exec.ErrWaitDelay), or the timeout struck as it exited.
		log.Debug("hook ran; a process it started may still run", "duration", took, "err", err)
		return false
	case r.stop.Err() != nil:
		status = "killed: devicectl is closing"
		killed = true
	case ctx.Err() != nil:
		status = fmt.Sprintf("timed out after %v", r.timeout)
	default:
		// "exit status 3", "signal: terminated", or why it did not start.
		status = err.Error()
	}
	log.Warn("hook failed", "status", status, "duration", took, "output", out.String())
	return killed
}

// prepare returns the environment and the stdin of e's run.
func (r *Runner) prepare(e event) (env []string, stdin []byte) {
	vars := validVars(e.vars, r.log, string(e.ev))
	for k, v := range r.common {
		if _, ok := vars[k]; !ok {
			vars[k] = v
		}
	}
	at := e.at.UTC().Format(timeLayout)

	// The environment: values may be cut, and a cut value is flagged. The flags are set last so
	// that a variable of the caller's that happens to be named like one cannot hide a cut.
	set := make(map[string]string, len(vars)+2)
	var flags []string
	for k, v := range vars {
		// An environment string ends at its first NUL: the value could not get through whole.
		v = strings.ReplaceAll(v, "\x00", "")
		set[prefix+k] = cut(v, maxEnvValue)
		if len(v) > maxEnvValue {
			flags = append(flags, prefix+k+"_TRUNCATED")
		}
	}
	for _, k := range flags {
		set[k] = "1"
	}
	set[prefix+"EVENT"] = string(e.ev)
	set[prefix+"TIME"] = at
	env = slices.Grow(slices.Clip(r.env), len(set))
	for _, k := range slices.Sorted(maps.Keys(set)) {
		env = append(env, k+"="+set[k])
	}

	// Stdin: the same, whole, as one JSON object on one line; event and time first, to be easy
	// to read in a log.
	var b bytes.Buffer
	b.WriteString(`{"event":`)
	writeJSON(&b, string(e.ev))
	b.WriteString(`,"time":`)
	writeJSON(&b, at)
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		b.WriteByte(',')
		writeJSON(&b, strings.ToLower(k))
		b.WriteByte(':')
		writeJSON(&b, vars[k])
	}
	b.WriteString("}\n")
	return env, b.Bytes()
}

// writeJSON writes s as a JSON string. <, > and & are left alone: this is not HTML.
func writeJSON(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	// A string always encodes: invalid UTF-8 becomes U+FFFD.
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // the newline Encode ends with
}

// validVars returns a copy of vars without the keys a variable cannot be named after: those not
// made of A-Z, 0-9 and _, and EVENT and TIME, which the Runner sets itself. Each is logged at
// debug, for the developer who wonders where a variable went.
func validVars(vars map[string]string, log *slog.Logger, from string) map[string]string {
	c := make(map[string]string, len(vars))
	for k, v := range vars {
		switch {
		case !validKey(k):
			log.Debug("variable dropped: its key is not made of A-Z, 0-9 and _", "key", k, "from", from)
		case k == "EVENT" || k == "TIME":
			log.Debug("variable dropped: the key is reserved", "key", k, "from", from)
		default:
			c[k] = v
		}
	}
	return c
}

// validKey reports whether k matches ^[A-Z0-9_]+$: such a key makes a variable name that every
// shell can read, and a JSON key that is just as easy to use once lower-cased.
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isOurs reports whether the environment entry kv is a DEVICECTL_ variable. Those are removed
// from the base environment: a hook must be able to trust that each one it sees describes its
// event, and the daemon's own (DEVICECTL_TOKEN) are no business of a hook's.
func isOurs(kv string) bool {
	return strings.HasPrefix(kv, prefix)
}

// cut returns s if it is at most max bytes long, or else its longest prefix that is at most max
// bytes and does not end inside a UTF-8 encoded character.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	// Back off to the start of the character that straddles the limit; at most UTFMax-1 steps,
	// so that bytes that are not UTF-8 at all are still cut near the limit.
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n]
}
