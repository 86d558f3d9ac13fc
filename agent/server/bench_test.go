//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/testing/proc"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
)

// latencies collects one duration per operation and reports their percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(p float64) float64 { return float64(l[min(len(l)-1, int(p*float64(len(l))))]) }
	b.ReportMetric(at(0.50), prefix+"p50-ns")
	b.ReportMetric(at(0.99), prefix+"p99-ns")
}

// A turn of the built-in planner, end to end: the text in, the planner, amplify_volume executed by
// a simulated device over loopback (the agent waits for its answer, so the device's work is in
// the figure), the reply streamed to the device and the final out.
func BenchmarkAgentTurn(b *testing.B) {
	c := testConfig(b)
	c.Agent.WaitForControl = true
	srv, addr := startServer(b, c)
	d := startDevice(b, "ws://"+addr+"/", "AA-BB-CC-DD-EE-01", "")
	d.waitRegistered(b)
	lat := make(latencies, 0, b.N)
	texts := []string{"把音量调到30", "把音量调到40"}
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		var last agent.Event
		for ev := range srv.Agent.Turn(context.Background(), agent.Request{Text: texts[i%2]}) {
			last = ev
		}
		lat = append(lat, time.Since(start))
		if last.Kind != agent.EventFinal {
			b.Fatalf("turn %d ended with %v: %v", i, last.Kind, last.Err)
		}
	}
	b.StopTimer()
	lat.report(b, "turn-")
}

// An A2A message/send round trip through that turn: a2a-go's client (A2A 1.0 JSON-RPC over HTTP
// on loopback, from the agent card) to the completed task, the task stored in agent.db.
func BenchmarkA2ASend(b *testing.B) {
	c := testConfig(b)
	c.Agent.WaitForControl = true
	_, addr := startServer(b, c)
	d := startDevice(b, "ws://"+addr+"/", "AA-BB-CC-DD-EE-01", "")
	d.waitRegistered(b)
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+addr)
	if err != nil {
		b.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		b.Fatal(err)
	}
	defer client.Destroy()
	lat := make(latencies, 0, b.N)
	texts := []string{"把音量调到30", "把音量调到40"}
	for i := 0; b.Loop(); i++ {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(texts[i%2]))
		start := time.Now()
		res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
			b.Fatalf("message/send %d answered %#v", i, res)
		}
	}
	b.StopTimer()
	lat.report(b, "send-")
}

// A seed tasks/send round trip as devicectl swarm --talk sends it, from 8 clients at once: POST
// /tasks/send naming the device in its metadata, the rule planner's turn through the device over
// loopback, the task stored in agent.db, the completed task answered. Its allocations (-benchmem)
// are the server's, the device's and the clients' together; the server's CPU per task under load
// is internal/testing/benchserve's.
func BenchmarkSeedSend(b *testing.B) {
	c := testConfig(b)
	c.Agent.WaitForControl = true
	_, addr := startServer(b, c)
	const mac = "AA-BB-CC-DD-EE-01"
	d := startDevice(b, "ws://"+addr+"/", mac, "")
	d.waitRegistered(b)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"message":{"role":"user","parts":[{"type":"text","text":"把音量调到30"}]},"metadata":{"mac":"` + mac + `"}}}`
	b.SetParallelism(4) // 4 x GOMAXPROCS(2)
	cpu := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := hc.Post("http://"+addr+"/tasks/send", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !strings.Contains(string(got), `"completed"`) {
				b.Errorf("%v %s", err, got)
				return
			}
		}
	})
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// processCPU is the CPU time this process has used, user and system (getrusage).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// 1,000 simulated devices (devicectl swarm, another process) registered with one devicectl serve:
// how much the serve process's resident set grew for each, once they are all registered and the
// server has settled.
func BenchmarkServeDevicesRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	const n = 1000
	bin := serveproc.Build(b)
	var perDevice, idle []float64
	for b.Loop() {
		before, after := serveRSS(b, bin, n)
		idle = append(idle, float64(before)/1024)
		perDevice = append(perDevice, float64(after-before)/1024/n)
	}
	slices.Sort(perDevice)
	slices.Sort(idle)
	b.ReportMetric(perDevice[len(perDevice)/2], "KiB/device")
	b.ReportMetric(idle[len(idle)/2], "idle-KiB")
}

// settle is how long a process is left alone before its RSS is read: the runtime returns freed
// memory in the background.
const settle = 3 * time.Second

// serveRSS starts devicectl serve, reads its RSS, registers n swarm devices with it, and reads it
// again. The swarm is stopped on return, serve when the benchmark ends.
func serveRSS(b *testing.B, bin string, n int) (before, after int64) {
	serve, url, stdout := serveproc.StartWithOutput(b, bin, "--state-dir", b.TempDir())
	pid := strconv.Itoa(serve.Pid)
	time.Sleep(settle)
	before = proc.RSS(b, pid)

	swarm := exec.Command(bin, "swarm", "-n", strconv.Itoa(n), "--server", url, "--interval", "1h")
	swarm.Stdout, swarm.Stderr = io.Discard, io.Discard
	if err := swarm.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		swarm.Process.Signal(syscall.SIGTERM)
		swarm.Wait()
	}()
	// serve prints a line per registration.
	registered := 0
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(2*time.Minute, func() { serve.Kill() })
	defer deadline.Stop()
	for registered < n && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "+ ") {
			registered++
		}
	}
	if registered < n {
		b.Fatalf("%d of %d devices registered", registered, n)
	}
	go io.Copy(io.Discard, stdout)
	time.Sleep(settle)
	return before, proc.RSS(b, pid)
}
