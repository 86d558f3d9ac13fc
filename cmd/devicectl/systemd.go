package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifySystemd speaks sd_notify for a Type=notify unit: READY=1 now, WATCHDOG=1 at half the
// unit's WatchdogSec while ctx lives, STOPPING=1 when ctx is done. Outside systemd (no
// NOTIFY_SOCKET) it sends nothing. The returned func waits for its goroutine; call it after ctx
// is done.
func notifySystemd(ctx context.Context, log *slog.Logger) (wait func()) {
	notify := func(state string) {
		if _, err := daemon.SdNotify(false, state); err != nil {
			log.Warn("telling systemd", "state", state, "err", err)
		}
	}
	notify(daemon.SdNotifyReady)
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("reading the systemd watchdog settings", "err", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var tick <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval / 2)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-tick:
				notify(daemon.SdNotifyWatchdog)
			case <-ctx.Done():
				notify(daemon.SdNotifyStopping)
				return
			}
		}
	}()
	return wg.Wait
}
