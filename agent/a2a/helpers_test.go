package a2a

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/tools"
)

// fakeRunner streams canned chunks and calls nothing. It can refuse the turn (err), fail after
// its chunks (failAfter), or block until the turn is canceled (block).
type fakeRunner struct {
	chunks    []string
	err       error
	failAfter error
	block     bool
	blockOn   string        // block only the turns with this text
	started   chan struct{} // when not nil, gets a value as each blocking turn starts
	gate      chan struct{} // when not nil, the final waits until it is closed

	mu   sync.Mutex
	reqs []agent.Request
}

func (f *fakeRunner) Turn(ctx context.Context, r agent.Request) iter.Seq[agent.Event] {
	return func(yield func(agent.Event) bool) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r)
		f.mu.Unlock()
		if f.err != nil {
			yield(agent.Event{Kind: agent.EventError, Err: f.err})
			return
		}
		for _, c := range f.chunks {
			if !yield(agent.Event{Kind: agent.EventChunk, Text: c}) {
				return
			}
		}
		if f.block || (f.blockOn != "" && r.Text == f.blockOn) {
			if f.started != nil {
				f.started <- struct{}{}
			}
			<-ctx.Done()
			yield(agent.Event{Kind: agent.EventError, Err: ctx.Err()})
			return
		}
		if f.gate != nil {
			if f.started != nil {
				f.started <- struct{}{}
			}
			select {
			case <-f.gate:
			case <-ctx.Done():
				yield(agent.Event{Kind: agent.EventError, Err: ctx.Err()})
				return
			}
		}
		if f.failAfter != nil {
			yield(agent.Event{Kind: agent.EventError, Err: f.failAfter})
			return
		}
		yield(agent.Event{Kind: agent.EventFinal, Text: strings.Join(f.chunks, "")})
	}
}

func (f *fakeRunner) Tools(mac string) []tools.Declaration {
	return []tools.Declaration{
		{Name: "amplify_volume", Description: "Set the speaker volume", MainType: tools.Remote, SubType: tools.Control, Parameters: &jsonschema.Schema{Type: "object"}},
		{Name: "calculate", Description: "Evaluate an arithmetic expression", MainType: tools.Local, SubType: tools.Query, Parameters: &jsonschema.Schema{Type: "object"}},
	}
}

func (f *fakeRunner) requests() []agent.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Request(nil), f.reqs...)
}

// openDB opens (or reopens) the database where names: a SQLite file, or a PostgreSQL URL
// (storetest.Where).
func openDB(t testing.TB, where string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), where)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// fixedClock is an injectable clock: each reading is one second after the last.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFixedClock() *fixedClock {
	return &fixedClock{t: time.Date(2023, 4, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.t
	c.t = c.t.Add(time.Second)
	return now
}

// counterIDs hands out "id-1", "id-2", ...
type counterIDs struct {
	mu sync.Mutex
	n  int
}

func (c *counterIDs) Next() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return fmt.Sprintf("id-%d", c.n)
}

type testServer struct {
	*httptest.Server
	h  *Handler
	db *store.DB

	mu   sync.Mutex
	hits map[string]int // "POST /a2a" -> requests served
}

// served reports how many requests reached method and path.
func (ts *testServer) served(method, path string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.hits[method+" "+path]
}

// newTestServer serves a handler over the database dbPath names (a SQLite file or a PostgreSQL
// URL; "" = a fresh SQLite file) with deterministic clock and ids.
func newTestServer(t testing.TB, run Runner, dbPath string, mod func(*Options)) *testServer {
	t.Helper()
	if dbPath == "" {
		dbPath = filepath.Join(t.TempDir(), "tasks.db")
	}
	db := openDB(t, dbPath)
	o := &Options{Runner: run, DB: db, Now: newFixedClock().Now, NewID: (&counterIDs{}).Next}
	if mod != nil {
		mod(o)
	}
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{h: h, db: db, hits: make(map[string]int)}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.hits[r.Method+" "+r.URL.Path]++
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.stop)
	return ts
}

var stopOnce sync.Map

// stop shuts the server, the handler and the database down (once).
func (ts *testServer) stop() {
	if _, done := stopOnce.LoadOrStore(ts, true); done {
		return
	}
	ts.Server.CloseClientConnections()
	ts.h.Close()
	ts.Server.Close()
	ts.db.Close()
}
