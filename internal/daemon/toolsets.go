package daemon

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/tools"
)

// A toolSource is one configured tool set: somewhere tools come from (an OpenTool server, an
// OpenAPI document, an MCP server). load reads its tools as they are now.
type toolSource interface {
	String() string // for logs: "toolsets.opentool[1] http://192.168.1.20:9627"
	load(ctx context.Context) ([]*tools.Tool, error)
	// watch says how the source is kept: refresh > 0 reads it again that often; dropAfter > 0
	// withdraws its tools once it has failed that long. Zero refresh: loaded once, retried until
	// it is.
	watch() (refresh, dropAfter time.Duration)
	close() // drops idle connections
}

// A runner is a source that keeps its tools current itself, such as an MCP server's session,
// which says when its tools change: run hands update each change, nil while the source is down,
// until ctx ends.
type runner interface {
	run(ctx context.Context, update func([]*tools.Tool))
}

// toolSets keeps the tools of the configured tool sets current, each source on its own
// goroutine: a source down at start-up is retried in the background, and its tools appear when it
// comes up; one gone for longer than its drop_after has them withdrawn. Every change is signalled
// on changed, and the daemon then registers the tools again.
type toolSets struct {
	sources []toolSource
	log     *slog.Logger
	changed chan struct{} // capacity 1: one pending wake-up covers any number of changes

	mu    sync.Mutex
	tools [][]*tools.Tool // per source, in config order

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// retry is the wait after a source failed: the agent's own rule (jittered, doubling), from 1 s
// to 30 s, so a fleet that lost its LAN server does not come back in step.
var retry = device.Backoff{Min: time.Second, Max: 30 * time.Second}

// startToolSets loads the sources given as ready (their tools known now, such as OpenAPI files
// read at start-up) and starts watching the rest.
func startToolSets(sources []toolSource, ready [][]*tools.Tool, log *slog.Logger) *toolSets {
	ctx, cancel := context.WithCancel(context.Background())
	ts := &toolSets{sources: sources, log: log, changed: make(chan struct{}, 1), tools: make([][]*tools.Tool, len(sources)), cancel: cancel}
	for i, src := range sources {
		if i < len(ready) && ready[i] != nil {
			ts.tools[i] = ready[i]
			if r, _ := src.watch(); r == 0 {
				continue // loaded for good
			}
		}
		ts.wg.Go(func() { ts.keep(ctx, i, src) })
	}
	return ts
}

// Tools returns the tools of every source, in config order.
func (ts *toolSets) Tools() []*tools.Tool {
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var all []*tools.Tool
	for _, t := range ts.tools {
		all = append(all, t...)
	}
	return all
}

// Changed is signalled after the tools changed.
func (ts *toolSets) Changed() <-chan struct{} {
	if ts == nil {
		return nil
	}
	return ts.changed
}

// Close stops watching and waits for the goroutines.
func (ts *toolSets) Close() {
	if ts == nil {
		return
	}
	ts.cancel()
	ts.wg.Wait()
	for _, s := range ts.sources {
		s.close()
	}
}

// keep loads source i now and again for as long as ctx lasts.
func (ts *toolSets) keep(ctx context.Context, i int, src toolSource) {
	refresh, dropAfter := src.watch()
	log := ts.log.With("toolset", src.String())
	if r, ok := src.(runner); ok {
		r.run(ctx, func(t []*tools.Tool) { ts.set(i, t, log) })
		return
	}
	lastOK := time.Now() // a source down from the start is withdrawn from nothing: no matter
	failures := 0
	for {
		t, err := src.load(ctx)
		if ctx.Err() != nil {
			return
		}
		var wait time.Duration
		if err == nil {
			if failures > 0 {
				log.Info("tool set reachable again", "tools", len(t))
			}
			failures, lastOK = 0, time.Now()
			ts.set(i, t, log)
			if refresh == 0 {
				return
			}
			wait = refresh
		} else {
			if failures == 0 {
				log.Warn("tool set not available; retrying in the background", "err", err)
			} else {
				log.Debug("tool set still not available", "err", err, "failures", failures+1)
			}
			failures++
			if dropAfter > 0 && time.Since(lastOK) >= dropAfter && len(ts.toolsOf(i)) > 0 {
				log.Warn("tool set gone too long; its tools are withdrawn until it is back", "unreachable_for", time.Since(lastOK).Round(time.Second))
				ts.set(i, nil, log)
			}
			wait = retry.Delay(failures - 1)
			if refresh > 0 && wait > refresh {
				wait = refresh
			}
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
	}
}

// toolsOf returns source i's tools now.
func (ts *toolSets) toolsOf(i int) []*tools.Tool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.tools[i]
}

// set makes t source i's tools, and signals a change when what they declare differs.
func (ts *toolSets) set(i int, t []*tools.Tool, log *slog.Logger) {
	ts.mu.Lock()
	same := sameDeclarations(ts.tools[i], t)
	ts.tools[i] = t
	ts.mu.Unlock()
	if same {
		return
	}
	log.Info("tool set changed", "tools", len(t))
	select {
	case ts.changed <- struct{}{}:
	default:
	}
}

func sameDeclarations(a, b []*tools.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Declaration, b[i].Declaration) {
			return false
		}
	}
	return true
}

// registry is the device's tools on hw (newRegistry) and those of ts now. A tool set's tool named
// like one already there is left out with a warning: the device's own tools come first, then the
// tool sets in config order. (The prefix key of a tool set is there to avoid it.)
func (d *Daemon) registry(hw *hardware.Hardware, c *config.Config, ts *toolSets) (*tools.Registry, error) {
	reg, err := hardware.NewRegistry(hw, c, d.opts.Version, d.state.String)
	if err != nil {
		return nil, err
	}
	AddToolSets(reg, ts.Tools(), d.log)
	return reg, nil
}

// AddToolSets adds the tool sets' tools extra to reg, leaving out with a warning those whose name
// is taken.
func AddToolSets(reg *tools.Registry, extra []*tools.Tool, log *slog.Logger) {
	for _, t := range extra {
		if _, taken := reg.Lookup(t.Name); taken {
			log.Warn("a tool set's tool has the name of another tool; left out (set the tool set's prefix)", "tool", t.Name)
			continue
		}
		if err := reg.Add(t); err != nil {
			log.Warn("a tool set's tool was refused; left out", "tool", t.Name, "err", err)
		}
	}
}

// refreshTools registers the tools again after a tool set changed.
func (d *Daemon) refreshTools() {
	old := d.cur.Load()
	p := *old
	reg, err := d.registry(p.hw, p.cfg, p.toolsets)
	if err != nil {
		d.log.Error("rebuilding the tools after a tool set changed; the tools in force stay", "err", err)
		return
	}
	p.reg = reg
	d.cur.Store(&p)
	d.agent.SetRegistry(reg)
	d.log.Info("tools changed", "tools", hardware.ToolNames(reg))
}
