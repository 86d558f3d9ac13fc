package console

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
)

// The reader reads only when asked, a wait for a line gives way to ctx, and stop ends it.
func TestLineReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := io.Pipe()
		lr := newLineReader(r)
		go func() {
			io.WriteString(w, "one\ntwo\n")
			w.Close()
		}()
		for _, want := range []string{"one", "two"} {
			if got, err := lr.next(t.Context()); got != want || err != nil {
				t.Fatalf("next = %q, %v; want %q", got, err, want)
			}
		}
		if _, err := lr.next(t.Context()); !errors.Is(err, io.EOF) {
			t.Fatalf("next at the end: %v, want io.EOF", err)
		}
		if _, err := lr.next(t.Context()); !errors.Is(err, io.EOF) {
			t.Fatalf("next after the end: %v, want io.EOF", err)
		}
		lr.stop()
	})
}

func TestLineReaderCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, w := io.Pipe()
		lr := newLineReader(r)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := lr.next(ctx)
			done <- err
		}()
		synctest.Wait() // next is waiting for a line
		select {
		case err := <-done:
			t.Fatalf("next returned %v with no line and ctx live", err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("next after cancel: %v", err)
		}
		// The read asked for is still pending: the next line goes to the next call.
		go io.WriteString(w, "late\n")
		if got, err := lr.next(t.Context()); got != "late" || err != nil {
			t.Fatalf("next = %q, %v; want late", got, err)
		}
		lr.stop() // nothing pending: stop waits for the reading goroutine
		w.Close()
	})
}
