// Package hooks runs user programs when something happens to the device, as Home Assistant's
// voice satellites do: turn on an LED when the server is reachable, play a chime when the AI has
// answered, log every tool call. It is how a device reacts to its own life without a line of Go.
//
// # Events
//
// devicectl fires five events (Events lists them, in this order):
//
//	connected      the WebSocket line to the server is up
//	registered     the server accepted mcp/registerTools
//	disconnected   a line that was up is gone
//	tool_executed  a tool call from the server ran and was answered
//	final_reply    the AI's reply ended (mcp/ai/message of type final)
//
// The user configures, per event, the program to run as an argument list, program first
// (hooks.<event> in the config). Events with no program fire nothing. The program is run as
// written, with nothing appended, and never through a shell: quotes, $, ; or * in the arguments
// mean nothing special. Shell syntax needs a script with a #! line, or an explicit
// ["/bin/sh", "-c", "..."]. New finds every program (through PATH when it has no slash), so a
// misconfigured hook is an error at start-up, naming the event.
//
// # What a hook gets
//
// The environment is Options.Env (devicectl's own environment by default) without any DEVICECTL_
// variable it had, plus these, so every DEVICECTL_ variable a hook sees describes its event:
//
//	DEVICECTL_EVENT  the event, e.g. tool_executed
//	DEVICECTL_TIME   when it was fired, RFC 3339 in UTC with nine digits of nanoseconds,
//	                 e.g. 2025-01-02T03:04:05.123456789Z
//	DEVICECTL_<KEY>  one for each detail of the event, and for each of Options.Common
//	                 (e.g. DEVICECTL_SERVER, DEVICECTL_MAC, DEVICECTL_TOOL); an event's
//	                 own detail wins over a common one with the same key
//
// Keys must match ^[A-Z0-9_]+$, and EVENT and TIME are taken: a detail with any other key is
// dropped, from the environment and from stdin alike, with a debug log. A value longer than
// 16 KiB is cut, at a character boundary, and DEVICECTL_<KEY>_TRUNCATED=1 is set: Linux refuses
// to start a program when one environment string exceeds 128 KiB, and a tool's result can. NUL
// bytes, which an environment cannot hold, are removed from the variable.
//
// Stdin is the whole event, nothing cut, as one JSON object on one line followed by end of file:
//
//	{"event":"tool_executed","time":"2025-01-02T03:04:05.123456789Z","mac":"…","server":"…","tool":"amplify_volume"}
//
// Its members are all strings: "event" and "time" first, as in DEVICECTL_EVENT and
// DEVICECTL_TIME, then every detail with its key lower-cased, sorted. A hook need not read stdin:
// one that exits without reading it, or closes it, is not a failure. The hook runs in devicectl's
// working directory, as its user.
//
// # Order and timing
//
// Fire only queues the event and returns at once: the caller is the network loop or a tool call,
// which a hook must never hold up. One goroutine runs the hooks strictly one at a time, in the
// order their events were fired, so a disconnected hook never runs before the connected hook
// fired before it, and hooks never overlap. The queue of events waiting behind the running hook
// is bounded (Options.QueueSize, 64 by default); when it is full the oldest waiting event is
// dropped, and a warning logged with a running count of the drops.
//
// Each hook runs in a process group of its own, and when the hook ends, whether it exited or was
// killed, every process left in that group is killed: a child it started in the background dies
// with it, so hooks that background work cannot pile up processes, one lot per event. Each run is
// bounded (Options.Timeout, 10 s by default); a hook still running then is killed, group and all.
// A hook that really means to leave a process running must start it in a session of its own,
// with its output redirected (setsid cmd >/dev/null 2>&1 </dev/null &); a run ends at most a
// second after the hook even if such a process holds its stdin or output, so it cannot wedge
// the queue.
//
// # Failures
//
// A hook fails when it exits with a status other than 0, is killed by a signal, times out or
// cannot be started. A failure is logged at warn, with the event, the program, the status
// ("exit status 3", "signal: terminated", "timed out after 10s") and the last KiB of what the
// hook wrote to stdout and stderr together, and is otherwise ignored: the next hook runs as
// usual, and devicectl carries on. A run that succeeded is logged at debug.
//
// Close stops taking events and lets the queued and running hooks finish, until its context
// ends; then it kills the running hook and its process group, drops the queued events (logged)
// and returns an error. It returns once the Runner's goroutine has.
package hooks
