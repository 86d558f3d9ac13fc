package rules

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent"
)

// FuzzPlan: whatever is said, with whichever tools are listed, the planner does not panic,
// does not fail the turn, calls only listed tools with input their schemas accept, and
// replies something.
func FuzzPlan(f *testing.F) {
	for _, tc := range planTests {
		f.Add(tc.text, uint8(0xff))
	}
	for _, s := range []string{"", "音量调到九千九百九十九万", "volume 99999999999999999999", "百分之", "调到", "louder quieter",
		"add 1e400 and 5", "3*((((((1))))))", "记住" + strings.Repeat("很长", 300), "搜索", "忘掉", "\xff\xfe", "１２３＋４５６",
		"set volume to -5", "音量负五", "一点五加两点五", "forget that I", "smile and cry and close your eyes and look amazed and mute"} {
		f.Add(s, uint8(0xff))
		f.Add(s, uint8(0x15))
	}
	w := newWorld(f)
	all := w.reg.Declarations()
	p := New(nil)
	f.Fuzz(func(t *testing.T, text string, mask uint8) {
		var only []string
		for i, d := range all {
			if mask&(1<<(i%8)) != 0 {
				only = append(only, d.Name)
			}
		}
		if only == nil {
			only = []string{"none"}
		}
		w.mem = &fakeMemory{} // the fake's search is quadratic: keep its store small
		ft := w.turn(t, text, only...)
		ft.req.SessionID = fmt.Sprint(mask % 4)
		if err := plan(t, p, ft); err != nil {
			t.Fatalf("Plan(%q): %v", text, err)
		}
		reply := ft.reply()
		if strings.TrimSpace(reply) == "" {
			t.Errorf("Plan(%q): empty reply", text)
		}
		if !utf8.ValidString(reply) {
			t.Errorf("Plan(%q): reply is not valid UTF-8: %q", text, reply)
		}
		if n := len(ft.recorded()); n > 2*maxIntents {
			t.Errorf("Plan(%q): %d tool calls", text, n)
		}
	})
}

// A long utterance is refused honestly, without calling anything; one just under the limit
// is read, with a bounded number of calls (its time is BenchmarkLongInput's).
func TestLongInput(t *testing.T) {
	w := newWorld(t)
	for _, text := range []string{strings.Repeat("把音量调到三十然后笑一个，", 100), strings.Repeat("add 5 and ", 500) + "5",
		strings.Repeat("一", 2000), strings.Repeat("please ", 1000) + "smile"} {
		f := w.turn(t, text)
		if err := plan(t, New(nil), f); err != nil {
			t.Fatal(err)
		}
		checkCalls(t, f, nil)
		if got := f.reply(); !strings.HasPrefix(got, "这句话太长了（超过1000个字）") && !strings.HasPrefix(got, "That is too long for me (over 1000 characters)") {
			t.Errorf("reply to %d characters: %q", utf8.RuneCountInString(text), clip(got, 80))
		}
	}
	for _, text := range justUnderLimit {
		f := w.turn(t, text)
		if err := plan(t, New(nil), f); err != nil {
			t.Fatal(err)
		}
		if n := len(f.recorded()); n > maxIntents {
			t.Errorf("%d calls, want at most %d", n, maxIntents)
		}
	}
}

// justUnderLimit are utterances the planner reads in full, each near the 1000-character limit
// and each a shape that a parser with a quadratic step would take long over.
var justUnderLimit = []string{
	strings.Repeat("把音量调到三十然后笑一个，", 76), // 988 characters
	strings.Repeat("please ", 140) + "smile",
	strings.Repeat("记住", 499),
	strings.Repeat("吧", 999),
	strings.Repeat(":", 999),
}

// BenchmarkLongInput is the time to plan a turn of each utterance just under the limit.
func BenchmarkLongInput(b *testing.B) {
	w := newWorld(b)
	for _, text := range justUnderLimit {
		b.Run(fmt.Sprintf("%d-%.8s", utf8.RuneCountInString(text), text), func(b *testing.B) {
			p := New(nil)
			for b.Loop() {
				if err := plan(b, p, w.turn(b, text)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// One planner serves many turns at once (run with -race).
func TestConcurrentTurns(t *testing.T) {
	w := newWorld(t)
	p := New(&Options{MaxSessions: 4})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j, text := range []string{"remember that I like tea", "what do I like", "forget that", "louder", "状态"} {
				f := w.turn(t, text)
				f.req.SessionID = fmt.Sprint((i + j) % 7)
				if err := plan(t, p, f); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkPlan is one turn: the planner, and the fake's validation and run of the real
// device tools over simulated hardware (the tools are listed once, outside the loop).
func BenchmarkPlan(b *testing.B) {
	w := newWorld(b)
	p := New(nil)
	ctx := context.Background()
	listed := w.turn(b, "")
	for _, text := range []string{"把音量调到30然后笑一个", "louder", "what is 12 divided by 4", "讲个笑话"} {
		b.Run(text, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f := &fakeTurn{tb: b, req: agent.Request{Text: text, SessionID: "s1", UserID: "u1"}, w: w, decls: listed.decls}
				if err := p.Plan(ctx, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParse is the planner's own share of a turn: reading the utterance.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		parse("把音量调到三十然后笑一个")
	}
}
