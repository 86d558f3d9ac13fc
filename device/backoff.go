package device

import (
	"math/rand/v2"
	"time"
)

// Backoff shapes the wait between connection attempts. Zero fields take the defaults.
type Backoff struct {
	// Min is the shortest wait, and the first attempt's scale (default 500ms). No wait is ever
	// shorter, whatever the server does, so a device can never spin on reconnects.
	Min time.Duration
	// Max caps the wait (default 30s).
	Max time.Duration
	// ResetAfter is how long a line must stay up after its registration was accepted to count as
	// having served (default 3s); a line that answered one of the server's calls has served at
	// once. After a line that served, the next try waits about Min: a device that served for ten
	// seconds and lost its line is back within about a second of the server being reachable. A
	// line that fails before registering, or is dropped within ResetAfter without answering a
	// call, does not reset the count, so a server that accepts and then drops every device keeps
	// them backing off instead of stampeding.
	ResetAfter time.Duration
}

func (b Backoff) withDefaults() Backoff {
	if b.Min <= 0 {
		b.Min = 500 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Max < b.Min {
		b.Max = b.Min
	}
	if b.ResetAfter <= 0 {
		b.ResetAfter = 3 * time.Second
	}
	return b
}

// delay returns the wait before retry number attempt (0-based): a uniformly random duration in
// [Min, min(Max, Min*2^(attempt+1))]. The jitter spreads a fleet of devices that lost the same
// server; the floor keeps every single one from hammering it.
func (b Backoff) delay(attempt int, rnd func() float64) time.Duration {
	ceiling := b.Max
	if attempt < 32 { // beyond that the doubling has long passed any sane Max
		if c := b.Min << (attempt + 1); c > 0 && c < ceiling {
			ceiling = c
		}
	}
	return b.Min + time.Duration(rnd()*float64(ceiling-b.Min))
}

// Delay returns a wait before retry number attempt (0-based), by the rule the agent reconnects
// with, for the other things a device retries (a tool set's server, say).
func (b Backoff) Delay(attempt int) time.Duration {
	return b.withDefaults().delay(attempt, defaultRand)
}

var defaultRand = rand.Float64
