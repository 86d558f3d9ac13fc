// Package execload is the agent server's side of an execute load on a device's line, for the
// benchmarks that put devicectl next to its floor: in the test's process (device/bench_test.go)
// and as processes of their own (internal/testing/benchproc). Frame is the mcp/tool/execute
// request they send, Served what counts as an answer, and Pipeline the load that keeps Window of
// them outstanding, so both measure the same load.
package execload
