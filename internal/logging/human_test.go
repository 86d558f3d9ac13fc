package logging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"testing"
	"time"
)

// record builds a record the way slog.Logger does, but with a chosen time.
func record(at time.Time, l slog.Level, msg string, args ...any) slog.Record {
	r := slog.NewRecord(at, l, msg, 0)
	r.Add(args...)
	return r
}

// user is a LogValuer resolving to a group.
type user struct{ id, n int }

func (u user) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("id", u.id), slog.Int("n", u.n))
}

// password is a LogValuer resolving to a string with a space in it.
type password string

func (password) LogValue() slog.Value { return slog.StringValue("not shown") }

func TestHumanFormat(t *testing.T) {
	at := time.Date(2025, 3, 1, 15, 4, 5, 123_000_000, time.Local)
	with := func(args ...any) func(slog.Handler) slog.Handler {
		return func(h slog.Handler) slog.Handler { return slog.New(h).With(args...).Handler() }
	}
	group := func(name string) func(slog.Handler) slog.Handler {
		return func(h slog.Handler) slog.Handler { return h.WithGroup(name) }
	}
	var nilPathErr *fs.PathError // its Error method panics on a nil receiver

	for _, tt := range []struct {
		name string
		opts Options
		with []func(slog.Handler) slog.Handler
		rec  slog.Record
		want string
	}{{
		name: "plain",
		rec:  record(at, slog.LevelInfo, "registered", "server", "ws://x", "mac", "AA-BB-CC-DD-EE-FF", "tools", 3),
		want: "15:04:05.123 INFO  registered server=ws://x mac=AA-BB-CC-DD-EE-FF tools=3\n",
	}, {
		name: "component from With",
		with: []func(slog.Handler) slog.Handler{with("component", "agent")},
		rec:  record(at, slog.LevelInfo, "registered", "tools", 3),
		want: "15:04:05.123 INFO  agent: registered tools=3\n",
	}, {
		name: "component from the record",
		rec:  record(at, slog.LevelInfo, "registered", "tools", 3, "component", "agent"),
		want: "15:04:05.123 INFO  agent: registered tools=3\n",
	}, {
		name: "innermost With wins",
		with: []func(slog.Handler) slog.Handler{with("component", "outer", "a", 1), with("component", "inner")},
		rec:  record(at, slog.LevelInfo, "msg"),
		want: "15:04:05.123 INFO  inner: msg a=1\n",
	}, {
		name: "record beats With",
		with: []func(slog.Handler) slog.Handler{with("component", "agent")},
		rec:  record(at, slog.LevelInfo, "msg", "component", "ws"),
		want: "15:04:05.123 INFO  ws: msg\n",
	}, {
		name: "component kept through a later group",
		with: []func(slog.Handler) slog.Handler{with("component", "agent"), group("g")},
		rec:  record(at, slog.LevelInfo, "msg", "k", 1),
		want: "15:04:05.123 INFO  agent: msg g.k=1\n",
	}, {
		name: "component inside a group is an attribute",
		with: []func(slog.Handler) slog.Handler{group("g")},
		rec:  record(at, slog.LevelInfo, "msg", "component", "x"),
		want: "15:04:05.123 INFO  msg g.component=x\n",
	}, {
		name: "component with no message",
		with: []func(slog.Handler) slog.Handler{with("component", "agent")},
		rec:  record(at, slog.LevelInfo, "", "k", "v"),
		want: "15:04:05.123 INFO  agent: k=v\n",
	}, {
		name: "no message",
		rec:  record(at, slog.LevelInfo, "", "k", "v"),
		want: "15:04:05.123 INFO  k=v\n",
	}, {
		name: "groups flatten",
		with: []func(slog.Handler) slog.Handler{with("a", 1), group("g"), with("b", 2), group("h")},
		rec:  record(at, slog.LevelInfo, "msg", "c", 3, slog.Group("i", "d", 4)),
		want: "15:04:05.123 INFO  msg a=1 g.b=2 g.h.c=3 g.h.i.d=4\n",
	}, {
		name: "empty groups omitted, keyless group inlined, empty attr ignored",
		rec:  record(at, slog.LevelInfo, "msg", slog.Group("empty"), slog.Group("", "x", 1), slog.Attr{}, "y", 2),
		want: "15:04:05.123 INFO  msg x=1 y=2\n",
	}, {
		name: "open group with no attributes omitted",
		with: []func(slog.Handler) slog.Handler{group("g")},
		rec:  record(at, slog.LevelInfo, "msg"),
		want: "15:04:05.123 INFO  msg\n",
	}, {
		name: "quoting",
		rec: record(at, slog.LevelInfo, "msg", "empty", "", "space", "a b", "eq", "x=y", "quote", `say "hi"`,
			"nl", "a\nb", "tab", "a\tb", "esc", "\x1b[31m", "plain", "ws://x/p?q=", "accent", "héllo", "a key", 1),
		want: "15:04:05.123 INFO  msg " + `empty="" space="a b" eq="x=y" quote="say \"hi\"" nl="a\nb" tab="a\tb" ` +
			`esc="\x1b[31m" plain="ws://x/p?q=" accent=héllo "a key"=1` + "\n",
	}, {
		name: "errors",
		rec: record(at, slog.LevelError, "failed", "err", errors.New("boom"),
			"wrapped", fmt.Errorf("dial: %w", errors.New("refused")), "nilerr", nilPathErr, "none", nil),
		want: `15:04:05.123 ERROR failed err=boom wrapped="dial: refused" nilerr=<nil> none=<nil>` + "\n",
	}, {
		name: "durations and other kinds",
		rec: record(at, slog.LevelInfo, "msg", "d", 1500*time.Millisecond, "d2", slog.AnyValue(time.Minute),
			"f", 0.25, "b", true, "u", uint64(7), "i", -3, "t", time.Date(2025, 3, 1, 15, 4, 5, 0, time.UTC),
			"ip", netip.MustParseAddr("10.0.0.1"), "s", struct{ A int }{1}, "bytes", []byte("raw")),
		want: "15:04:05.123 INFO  msg d=1.5s d2=1m0s f=0.25 b=true u=7 i=-3 t=2025-03-01T15:04:05.000Z " +
			"ip=10.0.0.1 s={A:1} bytes=raw\n",
	}, {
		name: "LogValuers resolved",
		rec:  record(at, slog.LevelInfo, "msg", "user", user{7, 2}, "pw", password("hunter2")),
		want: `15:04:05.123 INFO  msg user.id=7 user.n=2 pw="not shown"` + "\n",
	}, {
		name: "message with newlines and escapes kept on one line",
		with: []func(slog.Handler) slog.Handler{with("component", "a\nb")},
		rec:  record(at, slog.LevelWarn, "first\nsecond\x1b[2J \"as is\"", "k", 1),
		want: `15:04:05.123 WARN  a\nb: first\nsecond\x1b[2J \"as is\" k=1` + "\n",
	}, {
		name: "message with quotes as is",
		rec:  record(at, slog.LevelInfo, `said "hi" = ok`),
		want: `15:04:05.123 INFO  said "hi" = ok` + "\n",
	}, {
		name: "zero time",
		rec:  record(time.Time{}, slog.LevelInfo, "msg", "k", "v"),
		want: "INFO  msg k=v\n",
	}, {
		name: "journal drops time",
		opts: Options{Journal: true},
		with: []func(slog.Handler) slog.Handler{with("component", "agent")},
		rec:  record(at, slog.LevelInfo, "msg", "k", "v"),
		want: "<6>INFO  agent: msg k=v\n",
	}, {
		name: "debug",
		rec:  record(at, slog.LevelDebug, "msg"),
		want: "15:04:05.123 DEBUG msg\n",
	}, {
		name: "warn",
		rec:  record(at, slog.LevelWarn, "msg"),
		want: "15:04:05.123 WARN  msg\n",
	}, {
		name: "custom levels as slog names them",
		rec:  record(at, slog.LevelInfo+2, "msg"),
		want: "15:04:05.123 INFO+2 msg\n",
	}, {
		name: "colour on the level only",
		opts: Options{Color: true},
		rec:  record(at, slog.LevelWarn, "msg", "k", 1),
		want: "15:04:05.123 \x1b[33mWARN\x1b[0m  msg k=1\n",
	}, {
		name: "colour of errors",
		opts: Options{Color: true},
		rec:  record(at, slog.LevelError, "msg"),
		want: "15:04:05.123 \x1b[31mERROR\x1b[0m msg\n",
	}, {
		name: "colour of debug",
		opts: Options{Color: true, Journal: true},
		rec:  record(at, slog.LevelDebug, "msg"),
		want: "<7>\x1b[2mDEBUG\x1b[0m msg\n",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.opts.Format = "human"
			tt.opts.Level = slog.LevelDebug
			h := NewHandler(&buf, &tt.opts)
			for _, w := range tt.with {
				h = w(h)
			}
			if err := h.Handle(context.Background(), tt.rec); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestHumanSiblings checks that handlers derived from one parent do not share the array their
// attributes are formatted into.
func TestHumanSiblings(t *testing.T) {
	var buf bytes.Buffer
	parent := slog.New(NewHandler(&buf, &Options{Format: "human", Journal: true})).With("p", 0)
	a := parent.With("a", 1)
	b := parent.With("b", 2)
	a.Info("x")
	b.Info("y")
	want := "<6>INFO  x p=0 a=1\n<6>INFO  y p=0 b=2\n"
	if got := buf.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestHumanLevel(t *testing.T) {
	var lv slog.LevelVar
	lv.Set(slog.LevelWarn)
	var buf bytes.Buffer
	log := slog.New(NewHandler(&buf, &Options{Format: "human", Level: &lv, Journal: true}))
	log.Info("dropped")
	log.Warn("kept")
	lv.Set(slog.LevelDebug) // a LevelVar changed later applies at once
	log.Debug("now kept")
	want := "<4>WARN  kept\n<7>DEBUG now kept\n"
	if got := buf.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWriteErrorReturned(t *testing.T) {
	errDisk := errors.New("disk full")
	for _, format := range []string{"human", "text", "json"} {
		for _, journal := range []bool{false, true} {
			h := NewHandler(failWriter{errDisk}, &Options{Format: format, Journal: journal})
			err := h.Handle(context.Background(), record(time.Now(), slog.LevelInfo, "msg"))
			if !errors.Is(err, errDisk) {
				t.Errorf("%s, journal %v: Handle returned %v, want %v", format, journal, err, errDisk)
			}
		}
	}
}

// TestHumanLocalTime checks that the time is shown in the local zone, whatever zone the
// record's time is in.
func TestHumanLocalTime(t *testing.T) {
	at := time.Date(2025, 3, 1, 15, 4, 5, 0, time.FixedZone("far", 5*3600+1800))
	var buf bytes.Buffer
	h := NewHandler(&buf, &Options{Format: "human"})
	if err := h.Handle(context.Background(), record(at, slog.LevelInfo, "msg")); err != nil {
		t.Fatal(err)
	}
	if want := at.Local().Format("15:04:05.000") + " INFO  msg\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
