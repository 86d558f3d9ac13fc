package device_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/protocol"
)

func TestRenderer(t *testing.T) {
	chunk := func(s string) protocol.AIMessage { return protocol.AIMessage{Type: protocol.MessageChunk, Content: s} }
	final := func(s string) protocol.AIMessage { return protocol.AIMessage{Type: protocol.MessageFinal, Content: s} }
	thought := func(s string) protocol.AIMessage {
		return protocol.AIMessage{Type: protocol.MessageThought, Content: s}
	}
	for _, tc := range []struct {
		name         string
		opts         *device.RenderOptions
		msgs         []protocol.AIMessage
		out, thought string
	}{
		{"streamed turn: final only ends the line", nil,
			[]protocol.AIMessage{chunk("Hel"), chunk("lo."), final("Hello.")}, "Hello.\n", ""},
		{"final alone is shown", nil,
			[]protocol.AIMessage{final("Whole."), final("Next.")}, "Whole.\nNext.\n", ""},
		{"empty final alone is an empty line", nil,
			[]protocol.AIMessage{final("")}, "\n", ""},
		{"chunks win over a different final", nil,
			[]protocol.AIMessage{chunk("shown"), final("other")}, "shown\n", ""},
		{"thoughts hidden by default", nil,
			[]protocol.AIMessage{thought("hmm"), chunk("a"), final("")}, "a\n", ""},
		{"thoughts apart from the reply", &device.RenderOptions{ShowThoughts: true},
			[]protocol.AIMessage{chunk("a"), thought("hmm"), chunk("b"), final("")}, "ab\n", "hmm\n"},
		{"thoughts dimmed in colour", &device.RenderOptions{ShowThoughts: true, Color: true},
			[]protocol.AIMessage{thought("hmm"), final("x")}, "x\n", "\x1b[2mhmm\x1b[0m\n"},
		{"unknown types ignored", &device.RenderOptions{ShowThoughts: true},
			[]protocol.AIMessage{{Type: "image", Content: "x"}, chunk("a"), final("a")}, "a\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, thoughts bytes.Buffer
			r := device.NewRenderer(&out, &thoughts, tc.opts)
			for _, m := range tc.msgs {
				r.Render(m)
			}
			if out.String() != tc.out || thoughts.String() != tc.thought {
				t.Errorf("out %q, thoughts %q; want %q, %q", out.String(), thoughts.String(), tc.out, tc.thought)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRendererLogsOnce(t *testing.T) {
	var logs logbuf.Buffer
	r := device.NewRenderer(failWriter{}, nil, &device.RenderOptions{Logger: logs.Logger(), ShowThoughts: true})
	for _, m := range []protocol.AIMessage{
		{Type: protocol.MessageChunk, Content: "a"},
		{Type: protocol.MessageThought, Content: "no thoughts writer: dropped"},
		{Type: protocol.MessageChunk, Content: "b"},
		{Type: protocol.MessageFinal},
		{Type: "image", Content: "x"},
	} {
		r.Render(m)
	}
	got := logs.String()
	if n := strings.Count(got, "cannot write ai message"); n != 1 || !strings.Contains(got, "disk full") {
		t.Errorf("write failures logged %d times, want once with the error:\n%s", n, got)
	}
	if !strings.Contains(got, "type=image") {
		t.Errorf("unknown type not logged:\n%s", got)
	}
}

// BenchmarkRenderer is the Renderer alone, without the line: the cost the turn rule adds per
// chunk. BenchmarkRenderChunks (bench_test.go) measures the whole path against its floor.
func BenchmarkRenderer(b *testing.B) {
	r := device.NewRenderer(io.Discard, io.Discard, nil)
	chunk := protocol.AIMessage{Type: protocol.MessageChunk, Content: "北京今天天气晴朗，"}
	final := protocol.AIMessage{Type: protocol.MessageFinal, Content: "北京今天天气晴朗，"}
	b.ReportAllocs()
	for i := range b.N {
		if i%64 == 63 {
			r.Render(final)
		} else {
			r.Render(chunk)
		}
	}
}

// A reply or thought carrying escape sequences (a title change, a screen clear) is shown with
// them escaped: the server's text cannot drive the terminal. The renderer's own dimming stays.
func TestRendererSanitises(t *testing.T) {
	var out, thoughts bytes.Buffer
	r := device.NewRenderer(&out, &thoughts, &device.RenderOptions{ShowThoughts: true, Color: true})
	r.Render(protocol.AIMessage{Type: protocol.MessageThought, Content: "hmm\x1b]0;pwned\x07"})
	r.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "好的\x1b[2J\u009b"})
	r.Render(protocol.AIMessage{Type: protocol.MessageFinal, Content: ""})
	r.Render(protocol.AIMessage{Type: protocol.MessageFinal, Content: "\u202eall\r"})
	if got, want := out.String(), "好的\\x1b[2J\\u009b\n\\u202eall\\r\n"; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	if got, want := thoughts.String(), "\x1b[2mhmm\\x1b]0;pwned\\x07\x1b[0m\n"; got != want {
		t.Errorf("thought %q, want %q", got, want)
	}
}
