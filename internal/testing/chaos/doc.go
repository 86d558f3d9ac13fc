// Package chaos is a hostile stand-in agent server for testing a device agent the way a bad
// network and a badly behaved server would treat it, and the ledger that checks the agent kept
// its promises through all of it.
//
// A Server listens on loopback and speaks raw WebSocket frames (no JSON-RPC library in between),
// so it can send what no well-behaved peer would: random bytes, binary frames, invalid UTF-8,
// JSON nested 10,000 deep, numbers no decoder can hold, duplicate ids, answers to requests never
// made. It can also misbehave at the network level: drop a line (FIN, RST or a close frame),
// stall one (stop reading and writing without closing it, as a dead NAT entry does), restart
// (close its listener and come back on the same address), and answer registrations slowly,
// late, wrongly or never.
//
// Every frame the Server sends goes through a Ledger first, with what the device owes for it (an
// Expect): how many answers, with which id, with which codes, within what time. The Ledger reads
// every frame the device sends back and every message the device renders, and records a
// violation whenever the device breaks one of these rules:
//
//   - every request sent on a line that stayed up until its answer was due gets exactly one
//     answer; requests whose line died first may go unanswered and are counted as lost;
//   - mcp/ai/message chunks are rendered in the order sent, none skipped or repeated, and all of
//     those sent before a sync probe are rendered by the time the probe is answered;
//   - after every lost line the device registers again within the back-off bound (counted from
//     the server's return when it was down), a stalled line is given up within the keepalive
//     bound, and every back-off wait lies within the configured back-off.
//
// A sync probe is a request for a method the device does not serve. The device answers it inline,
// from its read loop, so its answer comes after the answers to everything sent before it that the
// device answers inline: malformed frames (-32700, -32600, often with id null, which only a count
// can match) and notifications (rendered before the next frame is read).
package chaos
