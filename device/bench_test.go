package device_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/internal/testing/execload"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// The benchmarks put devicectl next to its floor, measured in the same run on the same machine:
// a bare client on the same WebSocket library that does the least a device could (answers every
// execute with {}, writes every chunk's text). Each reports both and their ratio, so the figure
// that matters survives a noisy machine: x-floor is devicectl's cost as a multiple of the floor's.

// benchServer accepts one client at a time and hands the test its connection.
type benchServer struct {
	srv   *httptest.Server
	conns chan *websocket.Conn
	done  chan struct{}
}

func newBenchServer(b *testing.B) *benchServer {
	s := &benchServer{conns: make(chan *websocket.Conn), done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		s.conns <- c
		<-s.done
	}))
	b.Cleanup(func() { close(s.done); s.srv.Close() })
	return s
}

func (s *benchServer) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/" }

// floorClient is the bare client: a read loop that answers each request with an empty result and
// writes each chunk's content to out.
func floorClient(ctx context.Context, url string, out io.Writer) error {
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return err
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return nil
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		if m.ID == nil {
			if m.Params.Type == protocol.MessageFinal {
				io.WriteString(out, "\n")
			} else {
				io.WriteString(out, m.Params.Content)
			}
			continue
		}
		resp := append(append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...), `,"result":{}}`...)
		if err := c.Write(ctx, websocket.MessageText, resp); err != nil {
			return nil
		}
	}
}

// client is one side under measurement, connected and (for the device) registered.
type client struct {
	conn *websocket.Conn
	stop func()
}

func startFloor(b *testing.B, out io.Writer) client {
	s := newBenchServer(b)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { floorClient(ctx, s.url(), out) })
	c := <-s.conns
	return client{conn: c, stop: func() { cancel(); c.CloseNow(); wg.Wait() }}
}

// path is how a device runs its calls: on worker goroutines, as a board's parts (which may block)
// have them run, or inline on the line's reader, as the instant parts of --hardware sim allow.
type path bool

const (
	workers path = false
	inline  path = true
)

// startDevice starts a device on the built-in tools and simulated parts, as `devicectl run
// --hardware sim` builds them: with --sim-latency 0s (parts that count as real ones, their calls
// on the workers) for workers, without for inline.
func startDevice(b *testing.B, out io.Writer, p path) client {
	s := newBenchServer(b)
	r := device.NewRenderer(out, io.Discard, nil)
	reg := tools.NewRegistry()
	if err := builtin.Register(reg, &builtin.Options{Speaker: sim.NewSpeaker(nil), Face: sim.NewFace(nil), Instant: bool(p)}); err != nil {
		b.Fatal(err)
	}
	// A query on no part: calls of it run side by side, none waits for another or is superseded.
	speaker := sim.NewSpeaker(nil)
	echo := testTool(b, "read_level", 0, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
		v, err := speaker.Volume(ctx)
		return protocol.ExecuteResult{Status: "success", Message: strconv.Itoa(v)}, err
	})
	echo.Inline = bool(p)
	if err := reg.Add(echo); err != nil {
		b.Fatal(err)
	}
	a, err := device.New(&device.Options{
		URL:      s.url(),
		MAC:      testMAC,
		Registry: reg,
		Render:   r.Render,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.Run(ctx) })
	c := <-s.conns
	_, registration, err := c.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var m struct{ ID json.RawMessage }
	json.Unmarshal(registration, &m)
	ack := append(append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...), `,"result":{"status":"registered"}}`...)
	if err := c.Write(ctx, websocket.MessageText, ack); err != nil {
		b.Fatal(err)
	}
	return client{conn: c, stop: func() { cancel(); wg.Wait() }}
}

// roundTrips sends n executes one at a time, each waiting for its answer, and appends each one's
// round trip to lat when lat is not nil.
func roundTrips(b *testing.B, c client, n int, lat *[]time.Duration) time.Duration {
	ctx := context.Background()
	start := time.Now()
	for i := range n {
		sent := time.Now()
		if err := c.conn.Write(ctx, websocket.MessageText, execload.Frame(i)); err != nil {
			b.Fatal(err)
		}
		_, answer, err := c.conn.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if lat != nil {
			*lat = append(*lat, time.Since(sent))
		}
		if err := execload.Served(answer); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// percentile returns the p-th percentile (0 < p <= 100, nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// reportLatency reports the median and the 99th percentile of both sides' per-op latencies, and
// devicectl's as a multiple of the floor's (p50-x-floor, p99-x-floor).
func reportLatency(b *testing.B, dev, floor []time.Duration) {
	slices.Sort(dev)
	slices.Sort(floor)
	for _, p := range []float64{50, 99} {
		d, f := percentile(dev, p), percentile(floor, p)
		name := fmt.Sprintf("p%.0f", p)
		b.ReportMetric(float64(d.Nanoseconds()), name+"-ns")
		b.ReportMetric(float64(f.Nanoseconds()), "floor-"+name+"-ns")
		if f > 0 {
			b.ReportMetric(float64(d)/float64(f), name+"-x-floor")
		}
	}
}

// pipelined keeps execload.Window executes outstanding, sending the next as each answer arrives,
// until n have been answered.
func pipelined(b *testing.B, c client, n int) time.Duration {
	return pipelinedFrames(b, c, n, execload.Frame)
}

func pipelinedFrames(b *testing.B, c client, n int, frame func(int) []byte) time.Duration {
	ctx := context.Background()
	took, err := execload.Pipeline(n, frame, func(f []byte) error {
		err := c.conn.Write(ctx, websocket.MessageText, f)
		if err != nil {
			c.conn.CloseNow() // the reading stops too
		}
		return err
	}, func() ([]byte, error) {
		_, answer, err := c.conn.Read(ctx)
		return answer, err
	})
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// compare runs the floor and devicectl alternately in blocks, so both see the same machine, and
// reports each one's cost per op and their ratio (x-floor: devicectl's time over the floor's).
func compare(b *testing.B, floor, dev client, measure func(*testing.B, client, int) time.Duration) {
	const block = 256
	var tf, td time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(block, b.N-done)
		tf += measure(b, floor, n)
		td += measure(b, dev, n)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(td.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(tf.Nanoseconds())/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(td)/float64(tf), "x-floor")
	b.ReportMetric(float64(b.N)/td.Seconds(), "ops/s")
}

// BenchmarkExecuteRoundTrip: one execute at a time, server to device and back, through the
// workers a board's calls take (target <= 1.15x). Besides the mean (x-floor) it reports the
// median and the 99th percentile of each side's round trips (p50-ns, p99-ns, floor-p50-ns,
// floor-p99-ns) and their ratios (p50-x-floor, p99-x-floor).
func BenchmarkExecuteRoundTrip(b *testing.B) {
	benchRoundTrips(b, startDevice(b, io.Discard, workers))
}

// BenchmarkExecuteRoundTripInline: as BenchmarkExecuteRoundTrip, on the instant parts of
// --hardware sim, whose calls run on the line's reader.
func BenchmarkExecuteRoundTripInline(b *testing.B) {
	benchRoundTrips(b, startDevice(b, io.Discard, inline))
}

func benchRoundTrips(b *testing.B, dev client) {
	floor := startFloor(b, io.Discard)
	defer floor.stop()
	defer dev.stop()
	// Room for every op before the timer starts, so recording allocates nothing that is measured.
	lat := map[*websocket.Conn]*[]time.Duration{
		floor.conn: new(make([]time.Duration, 0, b.N)),
		dev.conn:   new(make([]time.Duration, 0, b.N)),
	}
	compare(b, floor, dev, func(b *testing.B, c client, n int) time.Duration {
		return roundTrips(b, c, n, lat[c.conn])
	})
	reportLatency(b, *lat[dev.conn], *lat[floor.conn])
}

// BenchmarkExecutePipelined: executes kept execload.Window deep, answers read concurrently,
// through the workers (target: the device's rate >= 0.85x the floor's, i.e. x-floor <= 1.18).
func BenchmarkExecutePipelined(b *testing.B) {
	benchPipelined(b, workers)
}

// BenchmarkExecutePipelinedInline: as BenchmarkExecutePipelined, on instant parts.
func BenchmarkExecutePipelinedInline(b *testing.B) {
	benchPipelined(b, inline)
}

func benchPipelined(b *testing.B, p path) {
	floor, dev := startFloor(b, io.Discard), startDevice(b, io.Discard, p)
	defer floor.stop()
	defer dev.stop()
	compare(b, floor, dev, pipelined)
}

// BenchmarkExecutePipelinedNoPart: as BenchmarkExecutePipelined, with a query on no part. The
// seed's amplify_volume calls queue on the speaker, and a waiting one is superseded (answered at
// once without running) by the next; these all run, up to MaxInFlight at once.
func BenchmarkExecutePipelinedNoPart(b *testing.B) {
	floor, dev := startFloor(b, io.Discard), startDevice(b, io.Discard, workers)
	defer floor.stop()
	defer dev.stop()
	compare(b, floor, dev, func(b *testing.B, c client, n int) time.Duration {
		return pipelinedFrames(b, c, n, func(i int) []byte {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"read_level","tool_input":{}},"id":"tool-call-%d"}`, i)
		})
	})
}

// pipeSink is the read end of a real pipe, drained by a goroutine that reports each newline: the
// renderer writes to a pipe as it does to a terminal or a log collector.
type pipeSink struct {
	w     *os.File
	lines chan struct{}
	done  chan struct{}
}

func newPipeSink(b *testing.B) *pipeSink {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	s := &pipeSink{w: w, lines: make(chan struct{}, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			if _, err := br.ReadSlice('\n'); err == bufio.ErrBufferFull {
				continue
			} else if err != nil {
				r.Close()
				return
			}
			s.lines <- struct{}{}
		}
	}()
	b.Cleanup(func() { w.Close(); <-s.done })
	return s
}

// BenchmarkRenderChunks: streamed reply chunks rendered to a pipe (target >= 100k chunks/s; the
// floor writes each chunk's text with no turn logic).
func BenchmarkRenderChunks(b *testing.B) {
	floorSink, devSink := newPipeSink(b), newPipeSink(b)
	floor, dev := startFloor(b, floorSink.w), startDevice(b, devSink.w, workers)
	defer floor.stop()
	defer dev.stop()
	sinks := map[*websocket.Conn]*pipeSink{floor.conn: floorSink, dev.conn: devSink}
	chunk := []byte(`{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"chunk","content":"北京今天天气晴朗，"}}`)
	final := []byte(`{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"final","content":"北京今天天气晴朗，"}}`)
	compare(b, floor, dev, func(b *testing.B, c client, n int) time.Duration {
		ctx := context.Background()
		start := time.Now()
		for range n {
			if err := c.conn.Write(ctx, websocket.MessageText, chunk); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.conn.Write(ctx, websocket.MessageText, final); err != nil {
			b.Fatal(err)
		}
		<-sinks[c.conn].lines
		return time.Since(start)
	})
}

// BenchmarkCallLocal: Agent.Call, one call at a time, through validation, the queues, a worker
// and the tool (the seed's amplify_volume on a simulated speaker): the device's own cost per call,
// without the line. No floor: it isolates the dispatcher's share of a round trip.
func BenchmarkCallLocal(b *testing.B) {
	a, err := device.New(&device.Options{
		URL:      "ws://127.0.0.1:1/",
		MAC:      testMAC,
		Registry: seedRegistry(b, sim.NewSpeaker(nil), sim.NewFace(nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	inputs := make([]json.RawMessage, 101)
	for i := range inputs {
		inputs[i] = fmt.Appendf(nil, `{"level":%d}`, i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := a.Call(ctx, "amplify_volume", inputs[i%101]); err != nil {
			b.Fatal(err)
		}
	}
}
