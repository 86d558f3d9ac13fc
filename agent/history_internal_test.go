package agent

import (
	"slices"
	"testing"
)

// The session used least recently is the one evicted at the bound, whether it was last read or
// last written; a session keeps its last perLen exchanges.
func TestHistoryEvictsLeastRecentlyUsed(t *testing.T) {
	h := newHistory(2, 3)
	for _, id := range []string{"a", "b", "c"} {
		h.add(id, Exchange{User: id + "1"})
	}
	h.get("a")                       // a is used again: b is now the oldest
	h.add("d", Exchange{User: "d1"}) // evicts b
	h.add("c", Exchange{User: "c2"}) // c, then a is the oldest
	h.add("e", Exchange{User: "e1"}) // evicts a
	for id, want := range map[string]int{"a": 0, "b": 0, "c": 2, "d": 1, "e": 1} {
		if got := len(h.get(id)); got != want {
			t.Errorf("session %s: %d exchanges, want %d", id, got, want)
		}
	}
	h.add("c", Exchange{User: "c3"})
	if got := h.get("c"); !slices.Equal(got, []Exchange{{User: "c2"}, {User: "c3"}}) {
		t.Errorf("session c: %v, want its last 2", got)
	}
	if len(h.sessions) != 3 {
		t.Errorf("%d sessions, want 3", len(h.sessions))
	}
}
