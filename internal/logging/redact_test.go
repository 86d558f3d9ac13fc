package logging

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Each secret ends with a core of letters and digits that no escaping changes, so a test can
// tell that no form of the secret, escaped any number of times, reached the output.
var secrets = []struct{ name, secret, core string }{
	{"plain", "tok-K3Y1a9", "K3Y1a9"},
	{"quote", `ab"cd-K3Y2b8`, "K3Y2b8"},
	{"backslash", `ef\gh-K3Y3c7`, "K3Y3c7"},
	{"html", "ij<kl>&-K3Y4d6", "K3Y4d6"},
	{"newline", "op\nqr-K3Y5e5", "K3Y5e5"},
	{"control", "st\x01uv-K3Y6f4", "K3Y6f4"},
	{"line separator", "wx\u2028yz-K3Y7g3", "K3Y7g3"},
}

// logSecret logs s in the ways a secret leaks: in the message, as a value, inside an error
// quoted with %q, in a group, inside a composite value.
func logSecret(log *slog.Logger, s string) {
	log.Info("token "+s+" rejected",
		"token", s,
		"err", fmt.Errorf("auth %q: denied", s),
		slog.Group("req", "header", "Bearer "+s),
		"cfg", map[string]string{"token": s},
	)
}

func TestRedactorThroughHandlers(t *testing.T) {
	for _, sc := range secrets {
		for _, format := range formats {
			t.Run(sc.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				r := NewRedactor(&buf)
				log := slog.New(NewHandler(r, &Options{Format: format}))

				logSecret(log, sc.secret)
				if !strings.Contains(buf.String(), sc.core) {
					t.Fatalf("before Add the secret should be visible, got %q", buf.String())
				}

				buf.Reset()
				r.Add(sc.secret)
				logSecret(log, sc.secret)
				got := buf.String()
				if strings.Contains(got, sc.core) {
					t.Errorf("secret %q leaked: %q", sc.secret, got)
				}
				if n := strings.Count(got, redacted); n < 5 {
					t.Errorf("%d redactions, want at least 5 (message, value, error, group, map): %q", n, got)
				}
				if strings.Count(got, "\n") != 1 {
					t.Errorf("want one line, got %q", got)
				}
			})
		}
	}
}

// TestRedactorSlogHandlers runs slog's own handlers over a Redactor, as a program that does not
// use NewHandler would.
func TestRedactorSlogHandlers(t *testing.T) {
	for _, sc := range secrets {
		for _, h := range []struct {
			name string
			new  func(*Redactor) slog.Handler
		}{
			{"text", func(r *Redactor) slog.Handler { return slog.NewTextHandler(r, nil) }},
			{"json", func(r *Redactor) slog.Handler { return slog.NewJSONHandler(r, nil) }},
		} {
			var buf bytes.Buffer
			r := NewRedactor(&buf)
			r.Add(sc.secret)
			logSecret(slog.New(h.new(r)), sc.secret)
			if got := buf.String(); strings.Contains(got, sc.core) || !strings.Contains(got, redacted) {
				t.Errorf("%s/%s: secret %q not redacted: %q", sc.name, h.name, sc.secret, got)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	for _, tt := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"no secrets", nil, "tok-1", "tok-1"},
		{"no match", []string{"tok-1"}, "nothing here", "nothing here"},
		{"raw", []string{"tok-1"}, "Bearer tok-1 sent", "Bearer [redacted] sent"},
		{"every occurrence", []string{"tok-1"}, "tok-1,tok-1, tok-1", "[redacted],[redacted], [redacted]"},
		{"go quoted", []string{`a"b\c`}, fmt.Sprintf("token %q", `a"b\c`), `token "[redacted]"`},
		{"json escaped", []string{"a<b>\n"}, `{"t":"a\u003cb\u003e\n"}`, `{"t":"[redacted]"}`},
		{"json escaped without html", []string{"a<b>\n"}, `{"t":"a<b>\n"}`, `{"t":"[redacted]"}`},
		{"one secret a prefix of another", []string{"abc", "abcdef"}, "xabcdefx", "x[redacted]x"},
		{"overlapping secrets", []string{"abcd", "cdef"}, "xabcdefx", "x[redacted]x"},
		{"overlapping occurrences", []string{"aa"}, "baaab", "b[redacted]b"},
		{"trimmed form", []string{"file-token\n"}, "Bearer file-token.", "Bearer [redacted]."},
		{"empty ignored", []string{""}, "a b", "a b"},
		{"white space ignored", []string{" \n\t"}, "a \n\t b", "a \n\t b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRedactor(&bytes.Buffer{})
			for _, s := range tt.secrets {
				r.Add(s)
			}
			if got := r.Scrub(tt.in); got != tt.want {
				t.Errorf("Scrub(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactorWrite(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor(&buf)
	r.Add("tok-1")
	p := []byte("a tok-1 b\n")
	n, err := r.Write(p)
	if err != nil || n != len(p) {
		t.Errorf("Write returned %d, %v; want %d, nil", n, err, len(p))
	}
	if got, want := buf.String(), "a [redacted] b\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if string(p) != "a tok-1 b\n" {
		t.Errorf("Write changed the caller's bytes to %q", p)
	}

	errDisk := errors.New("disk full")
	r = NewRedactor(failWriter{errDisk})
	if n, err := r.Write(p); !errors.Is(err, errDisk) || n != 0 {
		t.Errorf("Write to a failing writer returned %d, %v; want 0, %v", n, err, errDisk)
	}
}

// TestRedactorConcurrent writes while secrets are being added. Each line says how many secrets
// had been added when it was written; all of those must be redacted in it.
func TestRedactorConcurrent(t *testing.T) {
	const nSecrets, writers, lines = 32, 8, 300
	secret := func(i int) string { return fmt.Sprintf("secret-%02d-Z9", i) }
	var all strings.Builder
	for i := range nSecrets {
		all.WriteString(" " + secret(i))
	}

	var buf bytes.Buffer
	r := NewRedactor(&buf)
	var added atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range nSecrets {
			r.Add(secret(i))
			added.Add(1)
		}
	})
	for range writers {
		wg.Go(func() {
			for range lines {
				n := added.Load()
				fmt.Fprintf(r, "added=%d%s\n", n, all.String())
				_ = r.Scrub(all.String())
			}
		})
	}
	wg.Wait()

	out := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(out) != writers*lines {
		t.Fatalf("%d lines, want %d", len(out), writers*lines)
	}
	for _, line := range out {
		var n int
		if _, err := fmt.Sscanf(line, "added=%d", &n); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		for i := range n {
			if strings.Contains(line, secret(i)) {
				t.Fatalf("line %q: secret %d was added before the write but not redacted", line, i)
			}
		}
	}
	if got := r.Scrub(all.String()); strings.Contains(got, "Z9") {
		t.Errorf("after every Add, Scrub left %q", got)
	}
}

// A streamed reply writes a secret in pieces: a stream redactor scrubs it across the writes, and
// holds back no more than a possible start of one.
func TestStreamRedactorAcrossWrites(t *testing.T) {
	var b strings.Builder
	r := NewStreamRedactor(&b)
	r.Add("s3cr3t-tok")
	for _, piece := range []string{"the key is s3c", "r3t", "-tok, and s", "o on.", " Bye s3", "\n", "s3cr"} {
		if _, err := r.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b.String(), "the key is [redacted], and so on. Bye s3\n"; got != want {
		t.Errorf("before Flush: %q, want %q", got, want)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "the key is [redacted], and so on. Bye s3\ns3cr"; got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
}

// A plain redactor scrubs each write on its own and holds nothing back.
func TestRedactorHoldsNothing(t *testing.T) {
	var b strings.Builder
	r := NewRedactor(&b)
	r.Add("s3cr3t-tok")
	r.Write([]byte("half s3cr"))
	if b.String() != "half s3cr" {
		t.Errorf("got %q, want the write as it was", b.String())
	}
}
