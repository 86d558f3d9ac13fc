package hub_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
)

// The memory benchmark runs its devices in a child process (this test binary again, running
// TestHelperDevices), so that what it measures is the hub's side only.
const (
	envDevicesURL = "HUB_BENCH_DEVICES_URL"
	envDevicesN   = "HUB_BENCH_DEVICES_N"
)

// TestHelperDevices is not a test: it is the child of BenchmarkMemoryPerDevice. It connects and
// registers N devices, prints "ready", and holds them until its stdin closes.
func TestHelperDevices(t *testing.T) {
	url := os.Getenv(envDevicesURL)
	if url == "" {
		t.Skip("the child process of BenchmarkMemoryPerDevice")
	}
	n, _ := strconv.Atoi(os.Getenv(envDevicesN))
	ctx := context.Background()
	devs := make([]*hubtest.Device, 0, n)
	for i := range n {
		d, err := hubtest.Dial(ctx, url, &hubtest.Options{ClientID: fmt.Sprintf("bench-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		mac := fmt.Sprintf("02-00-00-00-%02X-%02X", i>>8, i&0xff)
		if _, err := d.Register(ctx, mac, hubtest.Tools); err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, d := range devs {
		d.Close()
	}
}

// BenchmarkMemoryPerDevice connects 1,000 registered devices (in a child process) to one hub and
// reports what each costs the hub's process: heap and stacks by runtime.MemStats, and RSS.
func BenchmarkMemoryPerDevice(b *testing.B) {
	const n = 1000
	// The timer runs: with it stopped, b.Loop would see no time pass and go on connecting 1,000
	// devices for ever. One round takes a second or more, so it is usually the only one.
	for b.Loop() {
		heap, rss := memoryPerDevice(b, n)
		b.ReportMetric(heap, "heap+stack-B/device")
		b.ReportMetric(rss, "RSS-B/device")
	}
}

func memoryPerDevice(b *testing.B, n int) (heapPer, rssPer float64) {
	h := hub.New(&hub.Options{PingInterval: 20 * time.Second})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	events, cancel := h.Subscribe(2 * n)
	defer cancel()

	heap0, rss0 := memory()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDevices$", "-test.count=1")
	cmd.Env = append(os.Environ(), envDevicesURL+"=ws"+strings.TrimPrefix(srv.URL, "http"), envDevicesN+"="+strconv.Itoa(n))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	sc := bufio.NewScanner(stdout)
	ready := false
	for sc.Scan() {
		if sc.Text() == "ready" {
			ready = true
			break
		}
	}
	if !ready {
		b.Fatal("the device process did not get ready")
	}
	for registered := 0; registered < n; {
		if e := <-events; e.Kind == hub.Registered {
			registered++
		}
	}
	if got := len(h.Devices()); got != n {
		b.Fatalf("%d devices registered, want %d", got, n)
	}
	heap1, rss1 := memory()
	return float64(heap1-heap0) / float64(n), float64(rss1-rss0) / float64(n)
}

// memory returns the heap and stacks in use after a GC, and the process's RSS.
func memory() (heapStack, rss int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse), rssBytes()
}

func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
