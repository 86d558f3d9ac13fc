package turn

import "github.com/devicectl/devicectl/protocol"

// Step is what one message means for the turn in progress. At most one of Thought and Text is
// set; End, when set, comes after Text.
type Step struct {
	// Thought is the content of a non-empty "thought": shown apart from the reply, if at all.
	Thought string
	// Text is reply text to show now, after what the turn has shown so far; empty when the
	// message adds none.
	Text string
	// Begin reports that Text is the first text of a new turn, so whatever is left of the previous
	// reply (queued speech, say) is stale.
	Begin bool
	// End reports that the message ended the turn: finish the line, flush what is buffered.
	End bool
	// Streamed, at End, reports that the turn's text came in chunks and the final's content was
	// dropped; otherwise the final's content is this Step's Text.
	Streamed bool
	// Reply, at End, is the whole text of the turn, as shown, when the Assembler gathers
	// (Gather > 0); see Truncated.
	Reply string
	// Truncated, at End, reports that Reply lacks the chunks that would have taken it past Gather
	// bytes. They were still shown.
	Truncated bool
	// Unknown reports a message of a type the protocol does not define; it was ignored, and a
	// consumer may log it.
	Unknown bool
}

// An Assembler applies the chunk/final rule to one stream of messages. The zero value is ready
// and gathers no reply text. It is not safe for concurrent use: the stream has an order, so feed
// it from one goroutine or under the consumer's lock.
type Assembler struct {
	// Gather, if positive, makes each End step carry the turn's text in Step.Reply, gathering up
	// to Gather bytes of streamed chunks; a chunk that does not fit, and every chunk after it, is
	// left out of Reply. A final that carries the reply alone is returned whole, as it is already
	// in memory. Zero gathers nothing, which costs nothing per chunk.
	Gather int

	streamed  bool   // a chunk of the turn in progress carried text
	reply     []byte // gathered text of the turn in progress
	truncated bool   // a chunk did not fit in reply
}

// Add takes the next message of the stream, of type typ with content content, and returns what it
// means for the turn.
func (a *Assembler) Add(typ, content string) Step {
	// Most messages are chunks in the middle of a turn: this much is small enough to inline. (An
	// empty chunk is Step{} either way.)
	if a.streamed && a.Gather == 0 && typ == protocol.MessageChunk {
		return Step{Text: content}
	}
	return a.add(typ, content)
}

func (a *Assembler) add(typ, content string) Step {
	switch typ {
	case protocol.MessageChunk:
		if content == "" {
			// An empty chunk neither starts a turn nor makes it streamed: a final after it is
			// still the reply.
			return Step{}
		}
		begin := !a.streamed
		a.streamed = true
		if a.Gather > 0 && !a.truncated {
			if len(a.reply)+len(content) <= a.Gather {
				a.reply = append(a.reply, content...)
			} else {
				a.truncated = true
			}
		}
		return Step{Text: content, Begin: begin}
	case protocol.MessageFinal:
		s := Step{End: true, Streamed: a.streamed}
		if a.streamed {
			if a.Gather > 0 {
				s.Reply = string(a.reply)
				s.Truncated = a.truncated
			}
		} else {
			s.Text = content
			s.Begin = content != ""
			if a.Gather > 0 {
				s.Reply = content
			}
		}
		a.streamed, a.truncated = false, false
		a.reply = a.reply[:0]
		if cap(a.reply) > keepCap {
			a.reply = nil // one long reply should not pin its buffer for the life of the stream
		}
		return s
	case protocol.MessageThought:
		return Step{Thought: content}
	}
	return Step{Unknown: true}
}

// keepCap is the most gathering buffer an Assembler keeps from one turn to the next.
const keepCap = 64 << 10
