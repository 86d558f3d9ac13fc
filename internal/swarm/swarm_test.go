package swarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/protocol"
)

// fakeAgent registers at once, answers one call of (index+1) ms and shows one message, then runs
// until it is stopped: the swarm's bookkeeping without a network, so fake time can drive it.
type fakeAgent struct {
	d     *Device
	state atomic.Int32
	log   *slog.Logger
	warn  string // logged once registered, if set
}

func (a *fakeAgent) Run(ctx context.Context) error {
	a.set(device.Registering)
	a.set(device.Registered)
	a.d.OnCall(device.CallReport{Duration: time.Duration(a.d.Index+1) * time.Millisecond})
	a.d.Render(protocol.AIMessage{Type: protocol.MessageFinal})
	if a.warn != "" {
		a.log.Warn(a.warn, "err", errors.New("boom"))
	}
	<-ctx.Done()
	a.set(device.Stopping)
	a.set(device.Idle)
	return nil
}

func (a *fakeAgent) set(st device.State) {
	a.state.Store(int32(st))
	a.d.OnState(st)
}

func (a *fakeAgent) State() device.State { return device.State(a.state.Load()) }

// Device i starts i*ramp/n after the start, a status line comes every interval with the counts
// of that interval, the latest warning is shown once, and the summary has the totals.
func TestSwarmRampStatusSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := NewPlan(4, "02-DC", 400*time.Millisecond, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out, errw logbuf.Buffer
		var mu sync.Mutex
		built := map[int]time.Time{}
		halted := atomic.Int32{}
		var s *Swarm
		s, err = New(p, &Options{Out: &out, Err: &errw, Build: func(d *Device) (Agent, func() error, error) {
			mu.Lock()
			built[d.Index] = time.Now()
			mu.Unlock()
			if want := MAC(p.Prefix, d.Index); d.MAC != want || d.ClientID != ClientID(want) {
				t.Errorf("device %d: MAC %s, Client-Id %s", d.Index, d.MAC, d.ClientID)
			}
			a := &fakeAgent{d: d, log: s.Logger()}
			if d.Index == 2 {
				a.warn = "not connected"
			}
			return a, func() error { halted.Add(1); return nil }, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()

		<-s.Ready()
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("Ready closed %s after the start, want 300ms (the last device's registration)", got)
		}
		time.Sleep(1200 * time.Millisecond)
		synctest.Wait()
		for i := range 4 {
			if got, want := built[i].Sub(start), time.Duration(i)*100*time.Millisecond; got != want {
				t.Errorf("device %d built %s after the start, want %s", i, got, want)
			}
		}
		if n, all := s.Registered(); n != 4 || all != 300*time.Millisecond {
			t.Errorf("Registered() = %d, %s; want 4, 300ms (the last device's start)", n, all)
		}
		const line = "1s  connected 4/4  registered 4/4  calls 4 (+4: p50 "
		if got := out.String(); !strings.HasPrefix(got, line) || !strings.HasSuffix(got, ")  messages 4\n") || strings.Count(got, "\n") != 1 {
			t.Errorf("status after 1.5s:\n%s\nwant one line starting %q, ending with the messages", got, line)
		}

		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if halted.Load() != 4 {
			t.Errorf("%d devices halted, want 4", halted.Load())
		}
		got := out.String()
		for _, want := range []string{
			"2s  connected 0/4  registered 0/4  calls 4 (+0)  messages 4\n", // the drain's status line: no new calls
			"swarm stopped after 1.5s: 4 devices\n",
			"  registered  all 4, 300ms after the start; 4 registrations, 0 lines lost\n",
			"  calls       4: p50 2",
			", max 4ms; 0 answered with an error\n",
			"  messages    4\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
		if e := errw.String(); strings.Count(e, "devicectl swarm: latest warning: not connected: boom\n") != 2 {
			t.Errorf("stderr %q: want the warning on the first status line and in the summary", e)
		}
	})
}

// A device that cannot be built after the first stops the swarm with its error: a swarm short
// of devices would measure the wrong thing.
func TestSwarmBuildError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := NewPlan(3, "02", time.Second, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("no face")
		s, err := New(p, &Options{Build: func(d *Device) (Agent, func() error, error) {
			if d.Index == 1 {
				return nil, nil, boom
			}
			return &fakeAgent{d: d}, nil, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Run(t.Context())
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "starting device 02-00-00-00-00-01") {
			t.Errorf("Run: %v, want device 1's error", err)
		}
	})
}

func TestNewNeedsBuild(t *testing.T) {
	if _, err := New(Plan{N: 1}, nil); err == nil {
		t.Error("New without Options: no error")
	}
	if _, err := New(Plan{N: 1}, &Options{}); err == nil {
		t.Error("New without Build: no error")
	}
}

func ExampleMAC() {
	prefix, _ := ParseMACPrefix("02-DC")
	fmt.Println(MAC(prefix, 0), MAC(prefix, 9999))
	// Output: 02-DC-00-00-00-00 02-DC-00-00-27-0F
}
