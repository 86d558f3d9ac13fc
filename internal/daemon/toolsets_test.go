package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/devicectl/devicectl/tools"
)

// fakeSource is a tool set whose availability the test switches; load answers at once.
type fakeSource struct {
	refresh, dropAfter time.Duration

	mu    sync.Mutex
	up    bool
	tools []*tools.Tool
	loads int
}

func (s *fakeSource) String() string                        { return "fake" }
func (s *fakeSource) watch() (time.Duration, time.Duration) { return s.refresh, s.dropAfter }
func (s *fakeSource) close()                                {}

func (s *fakeSource) load(context.Context) ([]*tools.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	if !s.up {
		return nil, errors.New("connection refused")
	}
	return s.tools, nil
}

func (s *fakeSource) loaded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads
}

func (s *fakeSource) set(up bool) {
	s.mu.Lock()
	s.up = up
	s.mu.Unlock()
}

func lamp(name string) *tools.Tool {
	return &tools.Tool{Declaration: tools.Declaration{Name: name, Description: "a lamp"}}
}

func names(ts []*tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// A source down at start-up is retried in the background and its tools appear when it comes up;
// one that then stays down past drop_after has them withdrawn, and they return with it. Each
// change is signalled once. In fake time: the waits are the real rule's (retry back-off, refresh).
func TestToolSetsKeep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{refresh: 30 * time.Second, dropAfter: 10 * time.Minute, tools: []*tools.Tool{lamp("lamp_on")}}
		ts := startToolSets([]toolSource{src}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer ts.Close()
		changed := func() bool {
			select {
			case <-ts.Changed():
				return true
			default:
				return false
			}
		}

		synctest.Wait()
		if len(ts.Tools()) != 0 || changed() {
			t.Fatalf("down at start: tools %v, want none and no change", names(ts.Tools()))
		}
		time.Sleep(time.Minute) // some retries, backing off
		if n := src.loaded(); n < 3 {
			t.Errorf("%d loads in a minute of failures, want retries", n)
		}

		src.set(true)
		time.Sleep(31 * time.Second) // the back-off is capped at the refresh interval
		synctest.Wait()
		if got := names(ts.Tools()); len(got) != 1 || got[0] != "lamp_on" || !changed() {
			t.Fatalf("up: tools %v; want [lamp_on] and a change signalled", got)
		}

		src.set(false)
		time.Sleep(9 * time.Minute)
		synctest.Wait()
		if len(ts.Tools()) != 1 || changed() {
			t.Fatalf("down for 9m of a 10m drop_after: tools %v; want them kept, no change", names(ts.Tools()))
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if len(ts.Tools()) != 0 || !changed() {
			t.Fatalf("down past drop_after: tools %v; want them withdrawn and a change", names(ts.Tools()))
		}

		src.set(true)
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if len(ts.Tools()) != 1 || !changed() {
			t.Fatalf("back: tools %v; want them again and a change", names(ts.Tools()))
		}
	})
}

// A source loaded at start-up with no refresh (an OpenAPI file) is not watched at all.
func TestToolSetsReadyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{}
		ts := startToolSets([]toolSource{src}, [][]*tools.Tool{{lamp("thermostat_get")}}, slog.New(slog.DiscardHandler))
		defer ts.Close()
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := src.loaded(); n != 0 || len(ts.Tools()) != 1 {
			t.Errorf("loads %d, tools %v; want no load and the tools given", n, names(ts.Tools()))
		}
	})
}
