package speech

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/protocol"
)

// voiceLog is a Voice that records calls: "interrupt" and "say <text>".
type voiceLog []string

func (v *voiceLog) Speak(text string) { *v = append(*v, "say "+text) }
func (v *voiceLog) Interrupt()        { *v = append(*v, "interrupt") }

var _ Voice = (*Speaker)(nil)

func chunk(s string) protocol.AIMessage {
	return protocol.AIMessage{Type: protocol.MessageChunk, Content: s}
}
func final(s string) protocol.AIMessage {
	return protocol.AIMessage{Type: protocol.MessageFinal, Content: s}
}
func thought(s string) protocol.AIMessage {
	return protocol.AIMessage{Type: protocol.MessageThought, Content: s}
}

func TestNarrator(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sentences bool
		msgs      []protocol.AIMessage
		want      []string
	}{
		{"final repeats streamed text", false,
			[]protocol.AIMessage{chunk("Hello "), chunk("there."), final("Hello there.")},
			[]string{"interrupt", "say Hello there."}},
		{"final carries the reply alone", false,
			[]protocol.AIMessage{final("Volume set to 40%.")},
			[]string{"interrupt", "say Volume set to 40%."}},
		{"a final that differs from the chunks: the chunks were the reply", true,
			[]protocol.AIMessage{chunk("Said. "), chunk("Done."), final("Something else.")},
			[]string{"interrupt", "say Said.", "say Done."}},
		{"empty final after chunks", false,
			[]protocol.AIMessage{chunk("A"), chunk("B"), final("")},
			[]string{"interrupt", "say AB"}},
		{"thoughts are not spoken", false,
			[]protocol.AIMessage{thought("plan: greet"), chunk("Hi."), thought("done?"), final("Hi.")},
			[]string{"interrupt", "say Hi."}},
		{"thought-only turn says nothing", false,
			[]protocol.AIMessage{thought("hmm"), final("")},
			nil},
		{"empty chunks neither start nor stream a reply", false,
			[]protocol.AIMessage{chunk(""), final("Whole.")},
			[]string{"interrupt", "say Whole."}},
		{"unknown types are ignored", false,
			[]protocol.AIMessage{{Type: "image", Content: "x"}, final("ok")},
			[]string{"interrupt", "say ok"}},
		{"each new reply interrupts the last", false,
			[]protocol.AIMessage{chunk("One."), final("One."), chunk("Two."), final(""), final("Three.")},
			[]string{"interrupt", "say One.", "interrupt", "say Two.", "interrupt", "say Three."}},
		{"a blank final does not cut the previous reply", false,
			[]protocol.AIMessage{final("One."), final(" ")},
			[]string{"interrupt", "say One."}},
		{"sentences as chunks arrive", true,
			[]protocol.AIMessage{chunk("Hello wor"), chunk("ld. How are"), chunk(" you?\nFine"), final("Hello world. How are you?\nFine")},
			[]string{"interrupt", "say Hello world.", "say How are you?", "say Fine"}},
		{"chinese sentences", true,
			[]protocol.AIMessage{chunk("你好。今天"), thought("想想"), chunk("天气很好！你呢？好"), final("")},
			[]string{"interrupt", "say 你好。", "say 今天天气很好！", "say 你呢？", "say 好"}},
		{"sentences from a final alone", true,
			[]protocol.AIMessage{final("One. Two! 三。")},
			[]string{"interrupt", "say One.", "say Two!", "say 三。"}},
		{"the rest is said at the final; the next reply interrupts", true,
			[]protocol.AIMessage{chunk("Old. Unfinished"), final(""), chunk("New."), final("")},
			[]string{"interrupt", "say Old.", "say Unfinished", "interrupt", "say New."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v voiceLog
			n := NewNarrator(&v, &Options{Sentences: tc.sentences})
			for _, m := range tc.msgs {
				n.Observe(m)
			}
			if d := diff(v, tc.want); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestNarratorLogsUnknownTypes(t *testing.T) {
	rec := &recorder{}
	var v voiceLog
	NewNarrator(&v, &Options{Logger: slog.New(rec)}).Observe(protocol.AIMessage{Type: "image"})
	if got := rec.at(slog.LevelDebug); len(got) != 1 || !strings.Contains(got[0], "type=image") {
		t.Errorf("logged %q, want one record naming the type", got)
	}
}
