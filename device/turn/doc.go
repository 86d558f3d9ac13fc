// Package turn applies the reply rule of the agent server's mcp/ai/message stream (docs/protocol.md),
// so that everything showing, speaking or handing on a reply agrees on what the reply was.
//
// The rule: a "chunk" appends text to the reply in progress; a "final" ends the turn. If chunks of
// the turn already carried text, the final's content is not shown again (servers often repeat the
// whole reply there) and the final only ends the line; if none did, the final's content is the
// reply. A "thought" is the model's reasoning: it is never part of the reply text, and showing it is
// the consumer's choice. Unknown types are ignored.
//
// An Assembler takes the messages in arrival order and answers each with a Step that says what to
// do: text to append (a delta), a thought, the start and end of a turn and, at the end, the whole
// reply. A terminal renderer writes Step.Text and a newline at Step.End; speech cuts Step.Text into
// sentences and flushes at Step.End; a hook takes Step.Reply at Step.End.
//
// When a final's content differs from the chunks before it, the chunks win: they were already
// shown, so the reply is what the user saw, and the final's content is dropped.
//
// The package imports nothing of devicectl but protocol, whose AIMessage is the message, so that
// speech and the daemon can use it without the device package.
package turn
