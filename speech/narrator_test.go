package speech

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/device/turn"
)

// voiceLog is a Voice that records calls: "interrupt" and "say <text>".
type voiceLog []string

func (v *voiceLog) Speak(text string) { *v = append(*v, "say "+text) }
func (v *voiceLog) Interrupt()        { *v = append(*v, "interrupt") }

var _ Voice = (*Speaker)(nil)

func chunk(s string) turn.Message { return turn.Message{Type: turn.Chunk, Content: s} }
func final(s string) turn.Message { return turn.Message{Type: turn.Final, Content: s} }
func thought(s string) turn.Message {
	return turn.Message{Type: turn.Thought, Content: s}
}

func TestNarrator(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sentences bool
		msgs      []turn.Message
		want      []string
	}{
		{"final repeats streamed text", false,
			[]turn.Message{chunk("Hello "), chunk("there."), final("Hello there.")},
			[]string{"interrupt", "say Hello there."}},
		{"final carries the reply alone", false,
			[]turn.Message{final("Volume set to 40%.")},
			[]string{"interrupt", "say Volume set to 40%."}},
		{"a final that differs from the chunks: the chunks were the reply", true,
			[]turn.Message{chunk("Said. "), chunk("Done."), final("Something else.")},
			[]string{"interrupt", "say Said.", "say Done."}},
		{"empty final after chunks", false,
			[]turn.Message{chunk("A"), chunk("B"), final("")},
			[]string{"interrupt", "say AB"}},
		{"thoughts are not spoken", false,
			[]turn.Message{thought("plan: greet"), chunk("Hi."), thought("done?"), final("Hi.")},
			[]string{"interrupt", "say Hi."}},
		{"thought-only turn says nothing", false,
			[]turn.Message{thought("hmm"), final("")},
			nil},
		{"empty chunks neither start nor stream a reply", false,
			[]turn.Message{chunk(""), final("Whole.")},
			[]string{"interrupt", "say Whole."}},
		{"unknown types are ignored", false,
			[]turn.Message{{Type: "image", Content: "x"}, final("ok")},
			[]string{"interrupt", "say ok"}},
		{"each new reply interrupts the last", false,
			[]turn.Message{chunk("One."), final("One."), chunk("Two."), final(""), final("Three.")},
			[]string{"interrupt", "say One.", "interrupt", "say Two.", "interrupt", "say Three."}},
		{"a blank final does not cut the previous reply", false,
			[]turn.Message{final("One."), final(" ")},
			[]string{"interrupt", "say One."}},
		{"sentences as chunks arrive", true,
			[]turn.Message{chunk("Hello wor"), chunk("ld. How are"), chunk(" you?\nFine"), final("Hello world. How are you?\nFine")},
			[]string{"interrupt", "say Hello world.", "say How are you?", "say Fine"}},
		{"chinese sentences", true,
			[]turn.Message{chunk("你好。今天"), thought("想想"), chunk("天气很好！你呢？好"), final("")},
			[]string{"interrupt", "say 你好。", "say 今天天气很好！", "say 你呢？", "say 好"}},
		{"sentences from a final alone", true,
			[]turn.Message{final("One. Two! 三。")},
			[]string{"interrupt", "say One.", "say Two!", "say 三。"}},
		{"the rest is said at the final; the next reply interrupts", true,
			[]turn.Message{chunk("Old. Unfinished"), final(""), chunk("New."), final("")},
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
	NewNarrator(&v, &Options{Logger: slog.New(rec)}).Observe(turn.Message{Type: "image"})
	if got := rec.at(slog.LevelDebug); len(got) != 1 || !strings.Contains(got[0], "type=image") {
		t.Errorf("logged %q, want one record naming the type", got)
	}
}
