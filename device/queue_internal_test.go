package device

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/devicectl/devicectl/tools"
)

// TestQueueInvariants drives the scheduler with random traffic: tools on random sets of three
// parts, random run times (some past the timeout, some ignoring it), Holds, and callers that give
// up. Whatever the mix, every call is answered exactly once, no more than MaxInFlight run at
// once, no part is driven by two at once, and on every part the calls that ran started in the
// order they arrived.
func TestQueueInvariants(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { queueModel(t, seed) })
		})
	}
}

func queueModel(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 99))
	const maxInFlight, timeout = 3, time.Second
	partNames := []string{"a", "b", "c"}

	var mu sync.Mutex
	running := 0
	busy := map[string]bool{}
	started := map[string][]int{} // per part, the calls that started on it, by arrival number
	var violations []string
	violate := func(format string, args ...any) { violations = append(violations, fmt.Sprintf(format, args...)) }

	// Each tool drives a set of parts; the input says for how long and whether it heeds its context.
	var ts []*tools.Tool
	toolParts := map[string][]string{}
	for i := range 6 {
		var parts []string
		for _, p := range partNames {
			if r.IntN(2) == 0 {
				parts = append(parts, p)
			}
		}
		name := fmt.Sprintf("t%d", i)
		toolParts[name] = parts
		sub := tools.Query
		if i%2 == 0 {
			sub = tools.Control
		}
		ts = append(ts, testTool(t, name, sub, parts, func(ctx context.Context, in json.RawMessage) (any, error) {
			var p struct{ N, Ms int }
			json.Unmarshal(in, &p)
			mu.Lock()
			running++
			if running > maxInFlight {
				violate("%d calls running, bound %d", running, maxInFlight)
			}
			for _, part := range parts {
				if busy[part] {
					violate("call %d drives %s while another does", p.N, part)
				}
				busy[part] = true
				started[part] = append(started[part], p.N)
			}
			mu.Unlock()
			d := time.Duration(p.Ms) * time.Millisecond
			if p.Ms%5 == 0 {
				time.Sleep(d) // ignores its context: a stuck part
			} else {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
			mu.Lock()
			running--
			for _, part := range parts {
				busy[part] = false
			}
			mu.Unlock()
			return p.N, nil
		}))
	}
	h := newHarness(t, Options{MaxInFlight: maxInFlight, MaxQueued: 1000, ToolTimeout: timeout}, ts...)
	input := func(n, ms int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"n":%d,"ms":%d}`, n, ms)) }

	const calls = 150
	var holds sync.WaitGroup
	for range calls {
		switch r.IntN(10) {
		case 0: // a Hold on some parts, for a while
			parts := []string{partNames[r.IntN(3)], partNames[r.IntN(3)]}
			hold := time.Duration(r.IntN(200)) * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(500))*time.Millisecond)
			holds.Go(func() {
				defer cancel()
				release, err := h.d.acquire(ctx, parts)
				if err != nil {
					return
				}
				mu.Lock()
				for _, part := range parts {
					if busy[part] {
						violate("a Hold got %s while a call drives it", part)
					}
				}
				mu.Unlock()
				time.Sleep(hold)
				release()
			})
			synctest.Wait() // the Hold takes its place before the next call arrives
		case 1: // a caller that gives up soon
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(100))*time.Millisecond)
			defer cancel()
			name := ts[r.IntN(len(ts))].Name
			h.mu.Lock()
			i := h.n
			h.n++
			h.mu.Unlock()
			if err := h.d.submit(ctx, h.d.settings.Load(), name, input(i, r.IntN(300)), ViaServer, testReply{mu: &h.mu, got: h.got, n: i}); err != nil {
				t.Fatalf("call %d refused: %v", i, err)
			}
		default:
			name := ts[r.IntN(len(ts))].Name
			h.mu.Lock()
			i := h.n
			h.n++
			h.mu.Unlock()
			if err := h.d.submit(context.Background(), h.d.settings.Load(), name, input(i, r.IntN(1500)), ViaServer, testReply{mu: &h.mu, got: h.got, n: i}); err != nil {
				t.Fatalf("call %d refused: %v", i, err)
			}
		}
		time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
	}
	holds.Wait()
	time.Sleep(time.Minute) // every call has ended by now, stuck ones included
	synctest.Wait()
	if !h.d.wait(context.Background()) {
		t.Fatal("calls still counted as running after a minute")
	}

	mu.Lock()
	defer mu.Unlock()
	for _, v := range violations {
		t.Error(v)
	}
	for part, ns := range started {
		if !slices.IsSorted(ns) {
			t.Errorf("part %s: calls started in the order %v, want arrival order", part, ns)
		}
	}
	answered := h.answers()
	for i := range h.n {
		if len(answered[i]) != 1 {
			t.Errorf("call %d answered %d times: %+v", i, len(answered[i]), answered[i])
		}
	}
	if h.n < calls/2 {
		t.Errorf("only %d calls were made", h.n)
	}
}
