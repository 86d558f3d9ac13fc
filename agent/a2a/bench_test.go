package a2a

import (
	"bufio"
	"fmt"
	io2 "io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/devicectl/devicectl/agent/store/storetest"
)

// BenchmarkMessageSend is one A2A 1.0 message/send round trip over loopback HTTP through
// a2a-go's client: JSON-RPC, the executor, a two-chunk fake turn and every task write, on each
// database.
// It reports the p50 and p99 latency next to the mean (the target is p50 <= 10 ms).
func BenchmarkMessageSend(b *testing.B) {
	eachDialect(b, func(b *testing.B, where string) { benchMessageSend(b, where, replyChunks) })
}

// eachDialect runs a benchmark on each database (agent/store/storetest).
func eachDialect(b *testing.B, f func(b *testing.B, where string)) {
	for _, d := range storetest.Dialects {
		b.Run(d.String(), func(b *testing.B) { f(b, storetest.Where(b, d)) })
	}
}

// BenchmarkMessageSendLong is BenchmarkMessageSend with a reply of 200 chunks, as a model
// streams it: the cost of a chunk must not grow with the reply.
func BenchmarkMessageSendLong(b *testing.B) {
	chunks := make([]string, 200)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("word %d of a long reply, ", i)
	}
	eachDialect(b, func(b *testing.B, where string) { benchMessageSend(b, where, chunks) })
}

func benchMessageSend(b *testing.B, where string, chunks []string) {
	ts := newTestServer(b, &fakeRunner{chunks: chunks}, where, nil)
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
	io, writes := readIO(b), ts.h.a2a.w.writes.Load()
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
	io.report(b)
	b.ReportMetric(float64(ts.h.a2a.w.writes.Load()-writes)/float64(b.N), "writes/task")
}

// BenchmarkSeedSend is one POST /tasks/send round trip, for comparison.
func BenchmarkSeedSend(b *testing.B) { eachDialect(b, benchSeedSend) }

func benchSeedSend(b *testing.B, where string) {
	ts := newTestServer(b, &fakeRunner{chunks: replyChunks}, where, nil)
	io, writes := readIO(b), ts.h.a2a.w.writes.Load()
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
	io.report(b)
	b.ReportMetric(float64(ts.h.a2a.w.writes.Load()-writes)/float64(b.N), "writes/task")
}

// BenchmarkSeedSendParallel is BenchmarkSeedSend from 16 clients at once, as a loaded server
// sees it: the task writes compete for SQLite's one write lock, or PostgreSQL's pool.
func BenchmarkSeedSendParallel(b *testing.B) { eachDialect(b, benchSeedSendParallel) }

func benchSeedSendParallel(b *testing.B, where string) {
	ts := newTestServer(b, &fakeRunner{chunks: replyChunks}, where, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"message":{"role":"user","parts":[{"type":"text","text":"把音量调到30"}]}}}`
	io, writes := readIO(b), ts.h.a2a.w.writes.Load()
	b.SetParallelism(8) // 8 x GOMAXPROCS(2)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := hc.Post(ts.URL+PathSeedSend, "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			got, err := io2.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !strings.Contains(string(got), `"completed"`) {
				b.Errorf("%v %s", err, got)
				return
			}
		}
	})
	io.report(b)
	b.ReportMetric(float64(ts.h.a2a.w.writes.Load()-writes)/float64(b.N), "writes/task")
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// ioCount is the process's write syscalls and bytes written so far (/proc/self/io: syscw,
// wchar), sockets and files alike; zero where the file is missing.
type ioCount struct{ calls, bytes int64 }

func readIO(b *testing.B) ioCount {
	var c ioCount
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscw":
			c.calls = n
		case "wchar":
			c.bytes = n
		}
	}
	return c
}

// report adds the write syscalls and bytes per op since c was read.
func (c ioCount) report(b *testing.B) {
	now := readIO(b)
	if b.N == 0 || now.calls == 0 {
		return
	}
	b.ReportMetric(float64(now.calls-c.calls)/float64(b.N), "syscw/op")
	b.ReportMetric(float64(now.bytes-c.bytes)/float64(b.N), "wbytes/op")
}
