package device

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// A drain may give up while calls run, and calls may be admitted after the count of running ones
// fell to zero during a drain: the dispatcher's idle signal must follow the count through both.
func TestDrainCountsCallsAdmittedDuringIt(t *testing.T) {
	d := newDispatcher(&Options{MaxInFlight: 2, Logger: slog.New(slog.DiscardHandler)})
	slots := d.settings.Load().slots
	short := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		return d.wait(ctx)
	}
	if !short() {
		t.Fatal("a dispatcher with no calls is not idle")
	}
	if why := d.admit(slots, true); why != "" {
		t.Fatal(why)
	}
	if short() {
		t.Fatal("wait reported idle with a call running")
	}
	<-slots
	d.done()
	if !short() {
		t.Fatal("wait did not report idle once the call ended")
	}
	// Admitted after the count fell to zero, as a local call is while a drain waits.
	if why := d.admit(slots, true); why != "" {
		t.Fatal(why)
	}
	if short() {
		t.Fatal("wait reported idle with a call admitted after an idle moment")
	}
	<-slots
	d.done()
	if !short() {
		t.Fatal("wait did not report idle once the second call ended")
	}
	d.stop()
	if why := d.admit(slots, false); why == "" {
		t.Error("a stopping dispatcher admitted the server's call")
	}
	if why := d.admit(slots, true); why != "" {
		t.Errorf("a stopping (not closed) dispatcher refused a local call: %s", why)
	} else {
		<-slots
		d.done()
	}
	d.close()
	if why := d.admit(slots, true); why == "" {
		t.Error("a closed dispatcher admitted a local call")
	}
}

// Delay is the agent's rule with the defaults filled: never below Min, never above Max.
func TestBackoffDelay(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 30 * time.Second}
	for attempt := range 40 {
		ceiling := min(30*time.Second, time.Second<<min(attempt+1, 31))
		for range 20 {
			if d := b.Delay(attempt); d < time.Second || d > ceiling {
				t.Fatalf("Delay(%d) = %v, want within [1s, %v]", attempt, d, ceiling)
			}
		}
	}
	if d := (Backoff{}).Delay(0); d < 500*time.Millisecond || d > time.Second {
		t.Errorf("zero Backoff Delay(0) = %v, want the defaults' [500ms, 1s]", d)
	}
}
