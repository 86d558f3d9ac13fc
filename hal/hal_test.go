package hal_test

import (
	"testing"

	"github.com/devicectl/devicectl/hal"
)

func TestExpressionsOrderAndFresh(t *testing.T) {
	want := []hal.Expression{"close_eyes_smile", "close_eyes", "amazed", "smile", "cry", "idle"}
	got := hal.Expressions()
	if len(got) != len(want) {
		t.Fatalf("Expressions() = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Expressions() = %q, want %q", got, want)
		}
	}
	got[0] = "mangled"
	if again := hal.Expressions(); again[0] != hal.CloseEyesSmile {
		t.Errorf("Expressions() shares its backing array: after a caller's write got %q", again[0])
	}
}

func TestExpressionValid(t *testing.T) {
	for _, e := range hal.Expressions() {
		if !e.Valid() {
			t.Errorf("%q.Valid() = false, want true", e)
		}
	}
	for _, e := range []hal.Expression{"", "Idle", "IDLE", " idle", "happy", "close-eyes"} {
		if e.Valid() {
			t.Errorf("%q.Valid() = true, want false", e)
		}
	}
}
