package turn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/device/turn"
	"github.com/devicectl/devicectl/protocol"
)

func chunk(s string) protocol.AIMessage {
	return protocol.AIMessage{Type: protocol.MessageChunk, Content: s}
}
func final(s string) protocol.AIMessage {
	return protocol.AIMessage{Type: protocol.MessageFinal, Content: s}
}
func thought(s string) protocol.AIMessage {
	return protocol.AIMessage{Type: protocol.MessageThought, Content: s}
}

// transcript renders steps the way a terminal would, marking what else a consumer sees:
// "<" a turn begins, "|" a turn ends, "(..)" a thought, "?" an unknown type, and at each end the
// gathered reply as [s:...] when streamed or [w:...] when the final carried it whole.
func transcript(a *turn.Assembler, msgs []protocol.AIMessage) string {
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
		msgs []protocol.AIMessage
		want string
	}{
		{"chunk chunk final", []protocol.AIMessage{chunk("Hello "), chunk("there."), final("Hello there.")},
			"<Hello there.|[s:Hello there.]"},
		{"final alone", []protocol.AIMessage{final("Volume set to 40%.")},
			"<Volume set to 40%.|[w:Volume set to 40%.]"},
		{"empty final alone ends an empty turn", []protocol.AIMessage{final("")},
			"|[w:]"},
		{"empty chunks neither begin nor stream a turn", []protocol.AIMessage{chunk(""), chunk(""), final("Whole.")},
			"<Whole.|[w:Whole.]"},
		{"empty chunks between chunks", []protocol.AIMessage{chunk("A"), chunk(""), chunk("B"), final("")},
			"<AB|[s:AB]"},
		{"streamed turn then a final alone: two turns",
			[]protocol.AIMessage{chunk("One"), chunk("."), final("One."), final("Two.")},
			"<One.|[s:One.]<Two.|[w:Two.]"},
		{"thoughts between chunks stay out of the reply",
			[]protocol.AIMessage{thought("plan"), chunk("Hi"), thought("more?"), chunk("!"), final("Hi!")},
			"(plan)<Hi(more?)!|[s:Hi!]"},
		{"empty thought is nothing", []protocol.AIMessage{thought(""), final("x")},
			"<x|[w:x]"},
		{"a thought does not end or begin a turn", []protocol.AIMessage{chunk("a"), thought("t"), final("")},
			"<a(t)|[s:a]"},
		{"unknown types are ignored", []protocol.AIMessage{{Type: "image", Content: "x"}, chunk("a"), {Type: "", Content: "y"}, final("a")},
			"?<a?|[s:a]"},
		{"a final that differs from the chunks: the chunks win",
			[]protocol.AIMessage{chunk("Shown "), chunk("text."), final("Something else entirely.")},
			"<Shown text.|[s:Shown text.]"},
		{"types are case-sensitive", []protocol.AIMessage{{Type: "Chunk", Content: "x"}, final("y")},
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
	got := transcript(&a, []protocol.AIMessage{chunk("a"), chunk("b"), final("ab"), final("c")})
	if want := "<ab|[s:]<c|[w:]"; got != want {
		t.Errorf("got %q, want %q: the zero Assembler shows text but gathers no reply", got, want)
	}
}

func TestAssemblerGatherBound(t *testing.T) {
	a := turn.Assembler{Gather: 5}
	got := transcript(&a, []protocol.AIMessage{chunk("abc"), chunk("de"), chunk("f"), chunk("g"), final(""),
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
	a.Add(protocol.MessageChunk, "first")
	first := a.Add(protocol.MessageFinal, "").Reply
	a.Add(protocol.MessageChunk, "XXXXX")
	a.Add(protocol.MessageFinal, "")
	if first != "first" {
		t.Errorf("first reply became %q", first)
	}
}

func TestAssemblerLongReplyDoesNotPinBuffer(t *testing.T) {
	a := turn.Assembler{Gather: 1 << 20}
	big := strings.Repeat("x", 100<<10)
	a.Add(protocol.MessageChunk, big)
	if s := a.Add(protocol.MessageFinal, ""); len(s.Reply) != len(big) {
		t.Fatalf("reply of %d bytes, want %d", len(s.Reply), len(big))
	}
	a.Add(protocol.MessageChunk, "small")
	if s := a.Add(protocol.MessageFinal, ""); s.Reply != "small" {
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
					a.Add(protocol.MessageFinal, "")
					continue
				}
				a.Add(protocol.MessageChunk, "北京今天天气晴朗，")
			}
		})
	}
}
