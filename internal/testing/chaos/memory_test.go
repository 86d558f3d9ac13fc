package chaos_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/chaos"
)

// heapGrowthBound is how much the heap in use may grow from the 10,000th call to the 100,000th:
// 1 MiB over 90,000 calls catches anything that keeps 12 bytes or more per call, and is well
// above the noise between two collections (measured: under 100 KiB either way, with the race
// detector or without).
const heapGrowthBound = 1 << 20

// TestChaosMemory makes CHAOS_CALLS executes (default 100,000) through one agent on one line, in
// batches as a busy server would send them, and checks that the heap in use after a collection
// does not grow between a tenth of the calls and all of them: the agent keeps nothing per call
// once it is answered. (The chaos server's ledger also forgets answered calls.)
func TestChaosMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 100,000 calls; not with -short")
	}
	checkLeaks(t)
	calls := int(envInt(t, "CHAOS_CALLS", 100_000))
	if calls < 1000 {
		t.Fatalf("CHAOS_CALLS=%d: want at least 1000 for the measurement to mean anything", calls)
	}
	led := chaos.NewLedger(bounds())
	srv := startServer(t, led)
	const batch = 64 // in flight at once: the agent's bound, so none is refused
	opts := agentOptions(srv.URL(), chaosRegistry(t, nil, nil, false), led)
	opts.MaxInFlight = batch
	stop := runAgent(t, opts, led)
	// One bound for the whole run: a batch that is never answered fails it, with the ledger's
	// account of why.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l, err := srv.WaitReady(ctx)
	if err != nil {
		t.Fatal(err)
	}

	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // the first may leave finalizer-held objects for the second
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	start := time.Now()
	var base uint64
	ids := make([]json.RawMessage, 0, batch)
	for done := 0; done < calls; {
		ids = ids[:0]
		for range min(batch, calls-done) {
			id := l.NewID(true)
			if err := l.Execute(id, chaos.EchoTool, `{"n":1,"s":"memory"}`, chaos.Expect{Codes: []int64{0}}); err != nil {
				t.Fatalf("after %d calls: %v", done, err)
			}
			ids = append(ids, id)
		}
		if err := l.Await(ctx, ids...); err != nil || lineDown(l) {
			t.Fatalf("after %d calls: the batch was not answered (%v); %s", done, err, led.Report().Summary())
		}
		done += len(ids)
		if base == 0 && done >= calls/10 {
			base = heap()
		}
	}
	final := heap()
	elapsed := time.Since(start)

	stop()
	srv.Close()
	r := led.Finish()
	for _, v := range r.Violations {
		t.Errorf("violation: %s", v)
	}
	if r.CallsAnswered != calls {
		t.Errorf("%d calls answered of %d", r.CallsAnswered, calls)
	}
	growth := int64(final) - int64(base)
	t.Logf("%d calls in %s (%.0f/s); heap in use %d KiB after %d calls, %d KiB after %d: %+d KiB (bound %d KiB)",
		calls, elapsed.Round(time.Millisecond), float64(calls)/elapsed.Seconds(), base>>10, calls/10, final>>10, calls, growth>>10, heapGrowthBound>>10)
	if growth > heapGrowthBound {
		t.Errorf("invariant 5: heap in use grew by %d KiB from call %d to call %d, past the bound of %d KiB: something is kept per call",
			growth>>10, calls/10, calls, heapGrowthBound>>10)
	}
}
