package turn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/device/turn"
)

func chunk(s string) turn.Message   { return turn.Message{Type: turn.Chunk, Content: s} }
func final(s string) turn.Message   { return turn.Message{Type: turn.Final, Content: s} }
func thought(s string) turn.Message { return turn.Message{Type: turn.Thought, Content: s} }

// transcript renders steps the way a terminal would, marking what else a consumer sees:
// "<" a turn begins, "|" a turn ends, "(..)" a thought, "?" an unknown type, and at each end the
// gathered reply as [s:...] when streamed or [w:...] when the final carried it whole.
func transcript(a *turn.Assembler, msgs []turn.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		s := a.Add(m.Type, m.Content)
		if s.Unknown {
			b.WriteString("?")
		}
		if s.Thought != "" {
			fmt.Fprintf(&b, "(%s)", s.Thought)
		}
		if s.Begin {
			b.WriteString("<")
		}
		b.WriteString(s.Text)
		if s.End {
			kind := "w"
			if s.Streamed {
				kind = "s"
			}
			if s.Truncated {
				kind += "!"
			}
			fmt.Fprintf(&b, "|[%s:%s]", kind, s.Reply)
		}
	}
	return b.String()
}

func TestAssembler(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []turn.Message
		want string
	}{
		{"chunk chunk final", []turn.Message{chunk("Hello "), chunk("there."), final("Hello there.")},
			"<Hello there.|[s:Hello there.]"},
		{"final alone", []turn.Message{final("Volume set to 40%.")},
			"<Volume set to 40%.|[w:Volume set to 40%.]"},
		{"empty final alone ends an empty turn", []turn.Message{final("")},
			"|[w:]"},
		{"empty chunks neither begin nor stream a turn", []turn.Message{chunk(""), chunk(""), final("Whole.")},
			"<Whole.|[w:Whole.]"},
		{"empty chunks between chunks", []turn.Message{chunk("A"), chunk(""), chunk("B"), final("")},
			"<AB|[s:AB]"},
		{"streamed turn then a final alone: two turns",
			[]turn.Message{chunk("One"), chunk("."), final("One."), final("Two.")},
			"<One.|[s:One.]<Two.|[w:Two.]"},
		{"thoughts between chunks stay out of the reply",
			[]turn.Message{thought("plan"), chunk("Hi"), thought("more?"), chunk("!"), final("Hi!")},
			"(plan)<Hi(more?)!|[s:Hi!]"},
		{"empty thought is nothing", []turn.Message{thought(""), final("x")},
			"<x|[w:x]"},
		{"a thought does not end or begin a turn", []turn.Message{chunk("a"), thought("t"), final("")},
			"<a(t)|[s:a]"},
		{"unknown types are ignored", []turn.Message{{Type: "image", Content: "x"}, chunk("a"), {Type: "", Content: "y"}, final("a")},
			"?<a?|[s:a]"},
		{"a final that differs from the chunks: the chunks win",
			[]turn.Message{chunk("Shown "), chunk("text."), final("Something else entirely.")},
			"<Shown text.|[s:Shown text.]"},
		{"types are case-sensitive", []turn.Message{{Type: "Chunk", Content: "x"}, final("y")},
			"?<y|[w:y]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := transcript(&turn.Assembler{Gather: 1 << 10}, tc.msgs)
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestAssemblerWithoutGather(t *testing.T) {
	var a turn.Assembler
	got := transcript(&a, []turn.Message{chunk("a"), chunk("b"), final("ab"), final("c")})
	if want := "<ab|[s:]<c|[w:]"; got != want {
		t.Errorf("got %q, want %q: the zero Assembler shows text but gathers no reply", got, want)
	}
}

func TestAssemblerGatherBound(t *testing.T) {
	a := turn.Assembler{Gather: 5}
	got := transcript(&a, []turn.Message{chunk("abc"), chunk("de"), chunk("f"), chunk("g"), final(""),
		chunk("xy"), final(""), final("a final alone is not cut")})
	// Everything is shown; the reply keeps what fit, stops at the first chunk that did not, and
	// the next turn starts with an empty budget.
	want := "<abcdefg|[s!:abcde]<xy|[s:xy]<a final alone is not cut|[w:a final alone is not cut]"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A turn's Reply must not change when the Assembler reuses its buffer for the next turn.
func TestAssemblerReplyOutlivesNextTurn(t *testing.T) {
	a := turn.Assembler{Gather: 100}
	a.Add(turn.Chunk, "first")
	first := a.Add(turn.Final, "").Reply
	a.Add(turn.Chunk, "XXXXX")
	a.Add(turn.Final, "")
	if first != "first" {
		t.Errorf("first reply became %q", first)
	}
}

func TestAssemblerLongReplyDoesNotPinBuffer(t *testing.T) {
	a := turn.Assembler{Gather: 1 << 20}
	big := strings.Repeat("x", 100<<10)
	a.Add(turn.Chunk, big)
	if s := a.Add(turn.Final, ""); len(s.Reply) != len(big) {
		t.Fatalf("reply of %d bytes, want %d", len(s.Reply), len(big))
	}
	a.Add(turn.Chunk, "small")
	if s := a.Add(turn.Final, ""); s.Reply != "small" {
		t.Errorf("reply %q after a long one, want %q", s.Reply, "small")
	}
}

func BenchmarkAssemblerChunk(b *testing.B) {
	for _, gather := range []int{0, 1 << 20} {
		b.Run(fmt.Sprintf("gather=%d", gather), func(b *testing.B) {
			a := turn.Assembler{Gather: gather}
			b.ReportAllocs()
			for i := range b.N {
				if i%64 == 63 {
					a.Add(turn.Final, "")
					continue
				}
				a.Add(turn.Chunk, "北京今天天气晴朗，")
			}
		})
	}
}
