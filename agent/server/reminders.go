//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// hubDevices is how reminders reach the devices: an mcp/ai/message final, which the device shows
// and speaks with no turn.
type hubDevices struct{ h *hub.Hub }

func (d hubDevices) Say(mac, text string) error { return d.h.Send(mac, protocol.MessageFinal, text) }

func (d hubDevices) Online(mac string) bool {
	_, ok := d.h.Device(mac)
	return ok
}

// speaksFirst is the server speaking without being asked: announcements, reminders and timers.
type speaksFirst struct {
	store *reminders.Store
	sched *reminders.Scheduler
	tools *reminders.ToolOptions
	stop  func() // ends the scheduler, its watch of the hub and the pushes, and waits for them
	log   *slog.Logger

	mu     sync.Mutex
	notify func(ctx context.Context, taskID, text string) error // the A2A door's Notify; nil: none yet
	ctx    context.Context                                      // the pushes' lifetime
	pushes sync.WaitGroup
}

// setNotify makes the reminders set during an A2A task push to that task when said: the A2A
// front door, which sends them, is built after the scheduler.
func (sf *speaksFirst) setNotify(notify func(ctx context.Context, taskID, text string) error) {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	sf.notify = notify
}

// said pushes a reminder set during an A2A task to that task's receivers, off the scheduler's
// goroutine: a slow receiver must not hold up the next reminder.
func (sf *speaksFirst) said(r reminders.Reminder) {
	if r.Task == "" {
		return
	}
	sf.mu.Lock()
	notify, ctx := sf.notify, sf.ctx
	sf.mu.Unlock()
	if notify == nil || ctx == nil || ctx.Err() != nil {
		return
	}
	sf.pushes.Go(func() {
		if err := notify(ctx, r.Task, reminders.Announcement(r)); err != nil {
			sf.log.Warn("reminder push failed", "task", r.Task, "err", err)
		}
	})
}

// startSpeaksFirst opens the reminders in db, adds their tools and announce to local, and starts
// the scheduler, which a device's registration nudges (it may have reminders waiting).
func startSpeaksFirst(c *config.Config, db *store.DB, h *hub.Hub, local *tools.Registry, s *Server) (*speaksFirst, error) {
	store, err := reminders.OpenStore(context.Background(), db)
	if err != nil {
		return nil, fmt.Errorf("the reminders in %s: %w", s.DBPath, err)
	}
	sf := &speaksFirst{store: store, log: s.log}
	sched, err := reminders.NewScheduler(&reminders.SchedulerOptions{
		Store: store, Devices: hubDevices{h}, Location: c.Agent.Location(), Grace: c.Agent.Reminders.Grace, Logger: s.log,
		OnSaid: sf.said,
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
		TaskOf: func(ctx context.Context) string {
			r, _ := agent.RequestOf(ctx)
			return r.TaskID
		},
	}
	if err := reminders.RegisterTools(local, topts); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	sf.mu.Lock()
	sf.ctx = ctx
	sf.mu.Unlock()
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
	sf.sched, sf.tools = sched, topts
	sf.stop = func() {
		cancel()
		unsubscribe()
		wg.Wait()
		sf.pushes.Wait()
	}
	return sf, nil
}

// preface is what a device says first at its next turn: the reminders it missed while away.
func (sf *speaksFirst) preface(ctx context.Context, mac string) string {
	missed, err := sf.store.TakeMissed(ctx, mac, sf.sched.Location())
	if err != nil {
		return ""
	}
	return reminders.MissedNotice(missed)
}
