package chaos

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

// The ledger is the suite's judge: each check must fail when the device breaks its rule, or the
// chaos run proves nothing. These tests play the device's side by hand.

var testBounds = Bounds{
	Due:        time.Second,
	Reregister: time.Second,
	Register:   time.Second,
	Stall:      time.Second,
	BackoffMin: 10 * time.Millisecond,
	BackoffMax: 100 * time.Millisecond,
}

func id(s string) json.RawMessage { return json.RawMessage(s) }

func TestLedgerChecks(t *testing.T) {
	t0 := time.Now()
	tests := []struct {
		name string
		play func(l *Ledger)
		want string // a violation containing this; "" for none
	}{
		{"answered once", func(l *Ledger) {
			l.expect(1, Expect{Kind: "execute", ID: id(`"a"`), Answers: 1}, false)
			l.response(1, id(`"a"`), 0, true)
		}, ""},
		{"answered twice", func(l *Ledger) {
			l.expect(1, Expect{Kind: "execute", ID: id(`"a"`), Answers: 1}, false)
			l.response(1, id(`"a"`), 0, true)
			l.response(1, id(`"a"`), 0, true)
		}, "answered more often than it was sent"},
		{"duplicate id answered twice", func(l *Ledger) {
			l.expect(1, Expect{ID: id(`7`), Answers: 1}, false)
			l.expect(1, Expect{ID: id(`7`), Answers: 1}, false)
			l.response(1, id(`7`), 0, true)
			l.response(1, id(`7`), protocol.CodeBusy, false)
		}, ""},
		{"one id, two requests, either outcome", func(l *Ledger) {
			l.expect(1, Expect{ID: id(`0`), Answers: 1, Codes: []int64{protocol.CodeInvalidParams}}, false)
			l.expect(1, Expect{ID: id(`0`), Answers: 1, Codes: []int64{0}}, false)
			l.response(1, id(`0`), 0, true)
			l.response(1, id(`0`), protocol.CodeInvalidParams, false)
		}, ""},
		{"answer to an id never sent", func(l *Ledger) {
			l.response(1, id(`"zz"`), 0, true)
		}, "never sent"},
		{"number echoed as a string", func(l *Ledger) {
			l.expect(1, Expect{ID: id(`5`), Answers: 1}, false)
			l.response(1, id(`"5"`), 0, true)
		}, "never sent"},
		{"string echoed with other escapes", func(l *Ledger) {
			l.expect(1, Expect{ID: id(`"\u00e9\/"`), Answers: 1}, false)
			l.response(1, id(`"é/"`), 0, true)
		}, ""},
		{"unacceptable code", func(l *Ledger) {
			l.expect(1, Expect{Kind: "execute", ID: id(`"a"`), Answers: 1, Codes: []int64{0, protocol.CodeBusy}}, false)
			l.response(1, id(`"a"`), protocol.CodeInternalError, false)
		}, "answered with error -32603"},
		{"unanswered past due on a live line", func(l *Ledger) {
			l.expect(1, Expect{Kind: "execute", ID: id(`"a"`), Answers: 1, Due: time.Millisecond}, false)
			l.cut(1, time.Now().Add(time.Second), false)
			l.lineEnded(1, time.Now().Add(time.Second), "test")
		}, "was answered 0 times of 1"},
		{"unanswered, line cut before due: lost", func(l *Ledger) {
			l.expect(1, Expect{Kind: "execute", ID: id(`"a"`), Answers: 1, Due: time.Hour}, false)
			l.cut(1, time.Now(), false)
			l.lineEnded(1, time.Now(), "test")
		}, ""},
		{"null answers add up at sync", func(l *Ledger) {
			l.expect(1, Expect{Null: true}, false)
			l.expect(1, Expect{ID: id(`"d"`), NullOK: true}, false)
			l.response(1, id(`null`), protocol.CodeParseError, false)
			l.response(1, id(`null`), protocol.CodeInvalidRequest, false)
			l.expect(1, Expect{Kind: "sync", ID: id(`"s"`), Answers: 1}, true)
			l.response(1, id(`"s"`), protocol.CodeMethodNotFound, false)
		}, ""},
		{"a null answer missing at sync", func(l *Ledger) {
			l.expect(1, Expect{Null: true}, false)
			l.expect(1, Expect{Null: true}, false)
			l.response(1, id(`null`), protocol.CodeParseError, false)
			l.expect(1, Expect{Kind: "sync", ID: id(`"s"`), Answers: 1}, true)
			l.response(1, id(`"s"`), protocol.CodeMethodNotFound, false)
		}, "1 answers with id null"},
		{"a result with id null", func(l *Ledger) {
			l.response(1, id(`null`), 0, true)
		}, "a result with id null"},
		{"chunks in order", func(l *Ledger) {
			l.notification(1, protocol.MessageChunk, "a")
			l.notification(1, protocol.MessageChunk, "b")
			l.notification(1, protocol.MessageFinal, "ab")
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "a"})
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "b"})
			l.Render(protocol.AIMessage{Type: "bogus", Content: "b"})
			l.Render(protocol.AIMessage{Type: protocol.MessageFinal, Content: "ab"})
		}, ""},
		{"a chunk skipped", func(l *Ledger) {
			l.notification(1, protocol.MessageChunk, "a")
			l.notification(1, protocol.MessageChunk, "b")
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "b"})
		}, "were skipped"},
		{"chunks swapped", func(l *Ledger) {
			l.notification(1, protocol.MessageChunk, "a")
			l.notification(1, protocol.MessageChunk, "b")
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "b"})
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "a"})
		}, "rendered after message 1"},
		{"a chunk rendered twice", func(l *Ledger) {
			l.notification(1, protocol.MessageChunk, "a")
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "a"})
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "a"})
		}, "rendered twice"},
		{"a chunk never sent", func(l *Ledger) {
			l.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "x"})
		}, "never sent"},
		{"chunks not rendered by the sync's answer", func(l *Ledger) {
			l.notification(1, protocol.MessageChunk, "a")
			l.expect(1, Expect{Kind: "sync", ID: id(`"s"`), Answers: 1}, true)
			l.response(1, id(`"s"`), protocol.CodeMethodNotFound, false)
		}, "0 of the 1 ai messages"},
		{"registered again in time", func(l *Ledger) {
			l.cut(1, t0, false)
			l.lineEnded(1, t0, "test")
			l.lineOpened(2, t0.Add(100*time.Millisecond))
			l.registration(2, t0.Add(200*time.Millisecond))
		}, ""},
		{"registered again too late", func(l *Ledger) {
			l.cut(1, t0, false)
			l.lineEnded(1, t0, "test")
			l.lineOpened(2, t0.Add(3*time.Second))
			l.registration(2, t0.Add(3*time.Second))
		}, "came 3s later"},
		{"late, but the server was down until just before", func(l *Ledger) {
			l.cut(1, t0, false)
			l.lineEnded(1, t0, "test")
			l.serverDown(t0)
			l.serverUp(t0.Add(2900 * time.Millisecond))
			l.lineOpened(2, t0.Add(3*time.Second))
			l.registration(2, t0.Add(3*time.Second))
		}, ""},
		{"never registered again", func(l *Ledger) {
			l.cut(1, t0.Add(-3*time.Second), false)
			l.lineEnded(1, t0.Add(-3*time.Second), "test")
		}, "no registration for"},
		{"registered twice on one line", func(l *Ledger) {
			l.registration(1, time.Now())
			l.registration(1, time.Now())
		}, "registration number 2"},
		{"the device closed a healthy line", func(l *Ledger) {
			l.lineEnded(1, time.Now(), "close 1002")
			l.lineOpened(2, time.Now())
			l.registration(2, time.Now())
		}, "closed a line the server kept healthy (close 1002)"},
		{"the device closed after a refused registration", func(l *Ledger) {
			l.closeOK(1, false)
			l.lineEnded(1, time.Now(), "close 1000")
			l.lineOpened(2, time.Now())
			l.registration(2, time.Now())
		}, ""},
		{"a silent registration kept too long", func(l *Ledger) {
			l.registration(1, t0)
			l.closeOK(1, true)
			l.lineEnded(1, t0.Add(3*time.Second), "close 1000")
			l.lineOpened(2, t0.Add(3*time.Second))
			l.registration(2, t0.Add(3*time.Second))
		}, "registration unanswered"},
		{"a stall noticed too late", func(l *Ledger) {
			l.cut(1, t0, true)
			l.lineEnded(1, t0.Add(3*time.Second), "EOF")
			l.lineOpened(2, t0.Add(3*time.Second))
			l.registration(2, t0.Add(3*time.Second))
		}, "stalled"},
		{"a back-off below the floor", func(l *Ledger) {
			l.BackoffWait(time.Millisecond)
		}, "outside [10ms, 100ms]"},
		{"a back-off above the cap", func(l *Ledger) {
			l.BackoffWait(time.Second)
		}, "outside [10ms, 100ms]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(testBounds)
			l.serverUp(t0.Add(-time.Minute)) // up since well before the line
			l.lineOpened(1, t0)
			tt.play(l)
			l.Stopping()
			for _, ll := range l.lines {
				if !ll.done {
					l.lineEnded(ll.id, time.Now(), "stopped")
				}
			}
			r := l.Finish()
			got := strings.Join(r.Violations, "\n")
			switch {
			case tt.want == "" && got != "":
				t.Errorf("violations:\n%s\nwant none", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("violations:\n%s\nwant one saying %q", got, tt.want)
			}
		})
	}
}

func TestSameID(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`"a"`, `"a"`, true},
		{`"\u0041"`, `"A"`, true},
		{`"\/"`, `"/"`, true},
		{`"\ud83d\ude42"`, `"🙂"`, true},
		{`"\ud800"`, `"\ufffd"`, false}, // a lone surrogate is not U+FFFD
		{"\"\xff\"", `"\ufffd"`, false}, // nor is a byte that is not UTF-8
		{`1`, `"1"`, false},
		{`1`, `1.0`, false},
		{`1e400`, `1e400`, true},
		{`null`, `null`, true},
		{`null`, `0`, false},
	}
	for _, tt := range tests {
		if got := SameID(id(tt.a), id(tt.b)); got != tt.same {
			t.Errorf("SameID(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
