package speech

import (
	"fmt"
	"testing"
)

func TestSplitter(t *testing.T) {
	type cuts = [][]string // what each cut returned: one per chunk, then the final one
	for _, tc := range []struct {
		name   string
		chunks []string
		want   cuts
	}{
		{"ascii", []string{"Hello wor", "ld. How are", " you? Fine"},
			cuts{nil, {"Hello world."}, {"How are you?"}, {"Fine"}}},
		{"chinese", []string{"你好。今天", "天气很好！你呢？好"},
			cuts{{"你好。"}, {"今天天气很好！", "你呢？"}, {"好"}}},
		{"newlines", []string{"one\ntwo\n\nthree"},
			cuts{{"one", "two"}, {"three"}}},
		{"decimal across chunks", []string{"Pi is 3.", "14 or so. ok"},
			cuts{nil, {"Pi is 3.14 or so."}, {"ok"}}},
		{"terminator at chunk end waits for the next chunk", []string{"Hi.", " There."},
			cuts{nil, {"Hi."}, {"There."}}},
		{"runs and closers", []string{`He said "Really?!" Then left... `, "Next"},
			cuts{{`He said "Really?!"`, "Then left..."}, nil, {"Next"}}},
		{"wide closers", []string{"他说：「好。」然后"},
			cuts{{"他说：「好。」"}, {"然后"}}},
		{"mixed", []string{"OK！Next. 下一个？"},
			cuts{{"OK！", "Next.", "下一个？"}, nil}},
		{"nothing to pronounce", []string{"...", " ? \n 。 "},
			cuts{nil, nil, nil}},
		{"url stays whole", []string{"See example.com/a.b for more"},
			cuts{nil, {"See example.com/a.b for more"}}},
		{"final ends the last sentence", []string{"Done."},
			cuts{nil, {"Done."}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s splitter
			var got cuts
			for _, c := range tc.chunks {
				s.write(c)
				got = append(got, s.cut(false))
			}
			got = append(got, s.cut(true))
			if g, w := fmt.Sprintf("%q", got), fmt.Sprintf("%q", tc.want); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
			if len(s.buf) != 0 || s.scan != 0 {
				t.Errorf("final cut left buf %q, scan %d", s.buf, s.scan)
			}
		})
	}
}

// A long sentence streamed in many chunks is scanned once, not once per chunk.
func TestSplitterResumesScan(t *testing.T) {
	var s splitter
	s.write("no end in sight")
	s.cut(false)
	if s.scan != len(s.buf) {
		t.Errorf("scan = %d, want %d (all of %q)", s.scan, len(s.buf), s.buf)
	}
	s.write(" yet.”")
	s.cut(false)
	if want := len("no end in sight yet"); s.scan != want {
		t.Errorf("scan = %d, want %d: the trailing .” must be looked at again", s.scan, want)
	}
}
