// Package benchproc holds devicectl's process-level benchmarks: the real binary, built as the boards
// ship it (static, stripped, with BOARD_TAGS: no agent server), next to a floor program measured in
// the same run on the same machine.
//
// The floor (./floor) is the least a device program could be: a bare client on the same WebSocket
// library (coder/websocket) that dials, sends the very mcp/registerTools request devicectl sent,
// and answers every execute with {}. devicectl runs on simulated parts that count as real ones
// (--hardware sim --sim-latency 0s), so its calls take the path a board's take; the memory
// benchmark also runs it on the instant parts of plain --hardware sim ("inline"). Each side is
// started, in turn, against a minimal agent server inside the benchmark, with the same
// environment (so the same GOGC), and measured for:
//
//   - start: from exec to the server reading the registration (median of several starts);
//   - idle RSS: VmRSS from /proc/PID/status once registered and settled;
//   - loaded RSS: peak resident size (VmHWM, reset before the load through
//     /proc/PID/clear_refs) while the server keeps executes pipelined, and the rate they are
//     answered at.
//
// Every figure is reported for each side, and as devicectl's cost over the floor's (x-floor), so
// a noisy machine moves all of them and the ratio survives. The sides take turns in every round,
// so all see the same machine. The package has no code of its own outside its tests and the
// floor; `make bench` runs the benchmarks, and `go test` checks every side still serves.
package benchproc
