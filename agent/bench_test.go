package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent"
)

// BenchmarkTurn runs turns through a planner that calls one of the device's query tools over a
// loopback WebSocket and streams the answer: the agent's and the hub's overhead plus one round
// trip. It reports the p50 turn time too.
func BenchmarkTurn(b *testing.B) {
	for _, tc := range []struct {
		name, tool, input string
	}{
		{"query", "get_status", `{}`},
		{"control", "amplify_volume", `{"level":30}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			a, _, url := setup(b, planFunc(func(ctx context.Context, t agent.TurnContext) error {
				res, err := t.Call(ctx, tc.tool, json.RawMessage(tc.input))
				if err != nil {
					return err
				}
				t.Chunk(string(res))
				return nil
			}), nil)
			device(b, url, macA, benchAnswer) // its messages are dropped once its buffer is full
			ctx := context.Background()
			var times []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				var final agent.Event
				for e := range a.Turn(ctx, agent.Request{Text: "status?"}) {
					final = e
				}
				if final.Kind != agent.EventFinal {
					b.Fatalf("turn ended with %v: %v", final.Kind, final.Err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
		})
	}
}

var benchAnswer = func(context.Context, string, json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
	return json.RawMessage(`{"status":"success","volume":30}`), nil
}
