// Package a2ajs runs the npm @a2a-js/sdk clients of agent/a2a/testdata/js (1.3.0, which speaks
// A2A 1.0, and 0.3.14, which speaks 0.3) against an A2A server a test started: check.mjs has each
// send, stream, get and cancel, and exits non-zero on the first mismatch. The agent/a2a handler's
// test and the agent server's test run the same clients through it.
//
// The clients are opt-in: scripts/a2a-js.sh installs them (npm ci) and a test runs them only with
// DEVICECTL_A2A_JS=1 (CI sets it); with the variable set, a missing node or missing modules fail
// the test rather than skip it, so a machine that lost them cannot turn the check into a skip.
package a2ajs
