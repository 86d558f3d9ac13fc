package speech

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/device"
)

// Voice is what a Narrator speaks through. *Speaker is one; both methods must return at once,
// because Observe runs in the connection's read loop.
type Voice interface {
	// Speak queues text after what is already queued.
	Speak(text string)
	// Interrupt silences what is being said and drops what is queued.
	Interrupt()
}

// Narrator speaks the replies in an mcp/ai/message stream through a Voice.
//
// It follows device.Renderer's rule, so each reply is spoken exactly once: if any chunk carried
// text, "final" only ends the reply and its content (often the whole text again) is ignored; if
// none did, "final" carries the whole reply. Thoughts are never spoken. The first chunk of a new
// reply, or a non-empty "final" that arrives alone, interrupts whatever is left of the previous
// reply, since an answer the user has moved past is noise.
type Narrator struct {
	voice     Voice
	sentences bool
	log       *slog.Logger

	mu       sync.Mutex
	streamed bool            // a chunk of the current reply carried text
	whole    strings.Builder // the reply so far, when speaking whole replies
	split    splitter        // the unspoken rest, when speaking sentences
}

// NewNarrator returns a Narrator speaking through v. Of opts it uses Sentences and Logger; nil
// means whole replies.
func NewNarrator(v Voice, opts *Options) *Narrator {
	o := opts.withDefaults()
	return &Narrator{
		voice:     v,
		sentences: o.Sentences,
		log:       o.Logger.With("component", "speech-narrator"),
	}
}

// Observe takes the next message of the stream. Messages must be given in arrival order; Observe
// is safe for concurrent use but order is the caller's to keep.
func (n *Narrator) Observe(m device.AIMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch m.Type {
	case device.MessageChunk:
		if m.Content == "" {
			return
		}
		if !n.streamed {
			n.voice.Interrupt()
			n.streamed = true
		}
		if !n.sentences {
			n.whole.WriteString(m.Content)
			return
		}
		n.split.write(m.Content)
		n.speak(n.split.cut(false))
	case device.MessageFinal:
		if !n.streamed {
			if !speakable(m.Content) {
				// Nothing to say is no reason to cut off the previous reply.
				return
			}
			n.voice.Interrupt()
			if n.sentences {
				n.split.write(m.Content)
			} else {
				n.whole.WriteString(m.Content)
			}
		}
		if n.sentences {
			n.speak(n.split.cut(true))
		} else if t := strings.TrimSpace(n.whole.String()); speakable(t) {
			n.voice.Speak(t)
		}
		n.whole.Reset()
		n.split.reset()
		n.streamed = false
	case device.MessageThought:
	default:
		n.log.Debug("ignoring ai message of unknown type", "type", m.Type)
	}
}

func (n *Narrator) speak(sentences []string) {
	for _, s := range sentences {
		n.voice.Speak(s)
	}
}
