package speech

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/device/turn"
	"github.com/devicectl/devicectl/protocol"
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
// It follows package turn's rule, so each reply is spoken exactly once: if any chunk carried
// text, "final" only ends the reply and its content (often the whole text again) is ignored; if
// none did, "final" carries the whole reply. Thoughts are never spoken. The first chunk of a new
// reply, or a "final" with something to say that arrives alone, interrupts whatever is left of the
// previous reply, since an answer the user has moved past is noise.
type Narrator struct {
	voice     Voice
	sentences bool
	log       *slog.Logger

	mu      sync.Mutex
	turn    turn.Assembler // gathers the whole reply unless speaking sentences
	split   splitter       // the unspoken rest, when speaking sentences
	inReply bool           // a reply has begun and not ended
	muted   bool           // the person spoke over the reply: the rest of it is not said
}

// maxWhole bounds a whole reply to be spoken; the chunks past it are not said.
const maxWhole = 1 << 20

// NewNarrator returns a Narrator speaking through v. Of opts it uses Sentences and Logger; nil
// means whole replies.
func NewNarrator(v Voice, opts *Options) *Narrator {
	o := opts.withDefaults()
	n := &Narrator{
		voice:     v,
		sentences: o.Sentences,
		log:       o.Logger.With("component", "speech-narrator"),
	}
	if !n.sentences {
		n.turn.Gather = maxWhole
	}
	return n
}

// Observe takes the next message of the stream. Messages must be given in arrival order; Observe
// is safe for concurrent use but order is the caller's to keep.
func (n *Narrator) Observe(m protocol.AIMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.turn.Add(m.Type, m.Content)
	if st.Unknown {
		n.log.Debug("ignoring ai message of unknown type", "type", m.Type)
		return
	}
	if st.Begin {
		n.muted = false
	}
	n.inReply = !st.End && (n.inReply || st.Begin)
	if n.muted {
		if st.End {
			n.muted = false
		}
		return
	}
	// A final alone with nothing to say is no reason to cut off the previous reply.
	if st.Begin && (!st.End || speakable(st.Text)) {
		n.voice.Interrupt()
	}
	if n.sentences {
		if st.Text != "" || st.End {
			n.split.write(st.Text)
			n.speak(n.split.cut(st.End))
		}
		return
	}
	if t := strings.TrimSpace(st.Reply); st.End && speakable(t) {
		n.voice.Speak(t)
	}
}

func (n *Narrator) speak(sentences []string) {
	for _, s := range sentences {
		n.voice.Speak(s)
	}
}

// Interrupt silences the reply being said and the rest of it still to come: the person spoke over
// it (barge-in). The next reply is said as usual, as is everything after Resume. It reports
// whether there was anything to silence: speech under way, or a reply that has not ended.
func (n *Narrator) Interrupt() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	busy := n.inReply
	if sp, ok := n.voice.(interface{ Speaking() bool }); ok && sp.Speaking() {
		busy = true
	}
	n.voice.Interrupt()
	n.split.reset()
	n.muted = true
	return busy
}

// Resume ends an Interrupt's silence: the server took what the person said next, and whatever
// comes now is the answer to it, even from a server that never ended the interrupted reply.
func (n *Narrator) Resume() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.muted = false
	n.turn = turn.Assembler{Gather: n.turn.Gather}
	n.inReply = false
}

// Say says the device's own words (not a reply), after what is queued.
func (n *Narrator) Say(text string) {
	n.voice.Speak(text)
}
