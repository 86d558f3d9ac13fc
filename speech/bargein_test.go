package speech

import (
	"slices"
	"strings"
	"testing"
)

// The person spoke over the reply: what is being said stops, and the rest of that reply is not
// said when its chunks and final arrive; the next reply is.
func TestNarratorInterruptSilencesTheRestOfTheReply(t *testing.T) {
	var v voiceLog
	n := NewNarrator(&v, &Options{Sentences: true})
	if n.Interrupt() {
		t.Error("Interrupt with nothing said reported something silenced")
	}
	v = nil
	n.Observe(chunk("One. "))
	if !n.Interrupt() {
		t.Error("Interrupt in the middle of a reply reported nothing silenced")
	}
	n.Observe(chunk("Two. "))
	n.Observe(chunk("Three."))
	n.Observe(final("One. Two. Three."))
	n.Observe(chunk("Next reply."))
	n.Observe(final(""))
	want := []string{"interrupt", "say One.", "interrupt", "interrupt", "say Next reply."}
	if d := diff(v, want); d != "" {
		t.Error(d)
	}
}

// A server that stops streaming the interrupted reply without ending it: once it takes what the
// person said next (Resume), its answer is said.
func TestNarratorResumeAfterAnUnendedReply(t *testing.T) {
	var v voiceLog
	n := NewNarrator(&v, &Options{Sentences: true})
	n.Observe(chunk("One. Two"))
	n.Interrupt()
	n.Resume()
	n.Observe(chunk("The answer."))
	n.Observe(final(""))
	if !slices.Contains(v, "say The answer.") {
		t.Errorf("the answer after Resume was not said: %q", v)
	}
	if slices.Contains(v, "say Two") {
		t.Errorf("the interrupted reply's rest was said: %q", v)
	}
}

// Against a real Speaker: barge-in kills the command saying the reply at once.
func TestInterruptStopsTheSpeakingCommand(t *testing.T) {
	s, log := synthSpeaker(t)
	n := NewNarrator(s, &Options{Sentences: true})
	n.Observe(chunk("Please hold on. "))
	waitLine(t, log, "begin Please hold on.")
	if !s.Speaking() {
		t.Error("Speaking() false while the command runs")
	}
	if !n.Interrupt() {
		t.Error("Interrupt while speaking reported nothing silenced")
	}
	n.Observe(chunk("More to say. "))
	waitIdle(t, s)
	if s.Speaking() {
		t.Error("Speaking() true after the interrupt")
	}
	got := strings.Join(lines(t, log), "\n")
	if strings.Contains(got, "end Please hold on.") || strings.Contains(got, "More to say") {
		t.Errorf("after the interrupt the speaker went on:\n%s", got)
	}
}

// With sentences (the default), the first sentence of a reply is said while the rest is still
// streaming: before the final arrives.
func TestFirstSentenceSpokenBeforeTheFinal(t *testing.T) {
	s, log := synthSpeaker(t)
	n := NewNarrator(s, &Options{Sentences: true})
	n.Observe(chunk("The volume is now thirty. And the"))
	waitLine(t, log, "end The volume is now thirty.")
	n.Observe(chunk(" face smiles."))
	n.Observe(final("The volume is now thirty. And the face smiles."))
	waitIdle(t, s)
	want := []string{"begin The volume is now thirty.", "end The volume is now thirty.", "begin And the face smiles.", "end And the face smiles."}
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
}
