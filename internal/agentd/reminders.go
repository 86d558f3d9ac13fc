package agentd

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/tools"
)

// hubDevices is how reminders reach the devices: an mcp/ai/message final, which the device shows
// and speaks with no turn.
type hubDevices struct{ h *hub.Hub }

func (d hubDevices) Say(mac, text string) error { return d.h.Send(mac, "final", text) }

func (d hubDevices) Online(mac string) bool {
	_, ok := d.h.Device(mac)
	return ok
}

// speaksFirst is the server speaking without being asked: announcements, reminders and timers.
type speaksFirst struct {
	store *reminders.Store
	sched *reminders.Scheduler
	tools *reminders.ToolOptions
	stop  func() // ends the scheduler and its watch of the hub, and waits for them
}

// startSpeaksFirst opens the reminders in db, adds their tools and announce to local, and starts
// the scheduler, which a device's registration nudges (it may have reminders waiting).
func startSpeaksFirst(c *config.Config, db *sql.DB, h *hub.Hub, local *tools.Registry, s *Server) (*speaksFirst, error) {
	store, err := reminders.OpenStore(context.Background(), db)
	if err != nil {
		return nil, fmt.Errorf("the reminders in %s: %w", s.DBPath, err)
	}
	sched, err := reminders.NewScheduler(&reminders.SchedulerOptions{
		Store: store, Devices: hubDevices{h}, Location: c.Agent.Location(), Grace: c.Agent.Reminders.Grace, Logger: s.log,
	})
	if err != nil {
		return nil, err
	}
	topts := &reminders.ToolOptions{
		Scheduler: sched, Store: store, Devices: h.MACs,
		Say: hubDevices{h}.Say,
		DeviceOf: func(ctx context.Context) string {
			r, _ := agent.RequestOf(ctx)
			return r.MAC
		},
	}
	if err := reminders.RegisterTools(local, topts); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	events, unsubscribe := h.Subscribe(0)
	var wg sync.WaitGroup
	wg.Go(func() { sched.Run(ctx) })
	wg.Go(func() {
		for e := range events {
			if e.Kind == hub.Registered {
				sched.Nudge()
			}
		}
	})
	return &speaksFirst{store: store, sched: sched, tools: topts, stop: func() {
		cancel()
		unsubscribe()
		wg.Wait()
	}}, nil
}

// preface is what a device says first at its next turn: the reminders it missed while away.
func (sf *speaksFirst) preface(ctx context.Context, mac string) string {
	missed, err := sf.store.TakeMissed(ctx, mac, sf.sched.Location())
	if err != nil {
		return ""
	}
	return reminders.MissedNotice(missed)
}
