package a2a

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// BenchmarkMessageSend is one A2A 1.0 message/send round trip over loopback HTTP through
// a2a-go's client: JSON-RPC, the executor, a two-chunk fake turn and every task write to SQLite.
// It reports the p50 and p99 latency next to the mean (the target is p50 <= 10 ms).
func BenchmarkMessageSend(b *testing.B) {
	ts := newTestServer(b, &fakeRunner{chunks: replyChunks}, "", nil)
	ctx := b.Context()
	card, err := agentcard.DefaultResolver.Resolve(ctx, ts.URL)
	if err != nil {
		b.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{}))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Destroy()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := c.SendMessage(ctx, userMessage("把音量调到30", nil))
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
			b.Fatalf("state %s", res.(*a2a.Task).Status.State)
		}
	}
	reportPercentiles(b, lat)
}

// BenchmarkSeedSend is one POST /tasks/send round trip, for comparison.
func BenchmarkSeedSend(b *testing.B) {
	ts := newTestServer(b, &fakeRunner{chunks: replyChunks}, "", nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"message":{"role":"user","parts":[{"type":"text","text":"把音量调到30"}]}}}`
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		resp, code := post(b, ts.URL+PathSeedSend, body)
		if code != http.StatusOK || !strings.Contains(resp, `"completed"`) {
			b.Fatalf("%d %s", code, resp)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
