package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is what a Ledger counted and the violations it found.
type Report struct {
	Faults map[string]int // injected, by kind

	Requests int // every frame that was owed an answer or a count, probes and garbage included
	Answered int // ... answered as often as owed
	Lost     int // ... unanswered because their line was cut or died before the answer was due
	Missing  int // ... unanswered although the line stayed up past the due time: violations

	Calls           int         // mcp/tool/execute requests sent
	CallsAnswered   int         // ... answered as often as sent
	CallsLost       int         // ... lost with their line
	CallsLostByLine map[int]int // line -> calls lost with it
	Busy            int         // answers -32002

	Lines         int // connections accepted
	Restarts      int // times the server closed its listener and came back
	Registrations int // registration requests received
	Accepted      int // ... answered with a result
	DeviceLosses  int // lines the device reported lost (OnLineLost)
	BackoffWaits  int // back-off waits the device reported (Sleep)
	MaxReregister time.Duration
	// DeviceCloses counts, by how they ended, lines the device closed although the server kept
	// them healthy; each is also a violation.
	DeviceCloses map[string]int

	AISent        int // chunks and finals sent
	AIRendered    int // ... rendered, in order
	AILost        int // ... not rendered because their line died first
	OtherRendered int // thoughts and unknown types handed to Render

	ViolationCount int
	Violations     []string // the first few, word for word
}

// Reconnects is how many times the device connected again after its first line.
func (r Report) Reconnects() int { return max(0, r.Lines-1) }

// Summary is the one-line account of a run.
func (r Report) Summary() string {
	var b strings.Builder
	total := 0
	for _, n := range r.Faults {
		total += n
	}
	fmt.Fprintf(&b, "faults=%d {%s}", total, countsText(r.Faults))
	fmt.Fprintf(&b, " calls=%d answered=%d lost=%d%s busy=%d", r.Calls, r.CallsAnswered, r.CallsLost, lostText(r.CallsLostByLine), r.Busy)
	fmt.Fprintf(&b, " requests=%d answered=%d lost=%d missing=%d", r.Requests, r.Answered, r.Lost, r.Missing)
	fmt.Fprintf(&b, " lines=%d reconnects=%d restarts=%d registrations=%d accepted=%d device_losses=%d backoffs=%d max_rereg=%s",
		r.Lines, r.Reconnects(), r.Restarts, r.Registrations, r.Accepted, r.DeviceLosses, r.BackoffWaits, r.MaxReregister.Round(time.Millisecond))
	fmt.Fprintf(&b, " ai_sent=%d rendered=%d lost=%d other=%d", r.AISent, r.AIRendered, r.AILost, r.OtherRendered)
	fmt.Fprintf(&b, " violations=%d", r.ViolationCount)
	return b.String()
}

func countsText(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// lostText lists the lines calls were lost with, as " [L3:2 L9:1]", the first 20 of them.
func lostText(m map[int]int) string {
	if len(m) == 0 {
		return ""
	}
	lines := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, min(len(lines), 21))
	for i, l := range lines {
		if i == 20 {
			parts = append(parts, fmt.Sprintf("+%d lines", len(lines)-20))
			break
		}
		parts = append(parts, fmt.Sprintf("L%d:%d", l, m[l]))
	}
	return " [" + strings.Join(parts, " ") + "]"
}
