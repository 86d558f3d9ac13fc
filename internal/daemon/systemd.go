package daemon

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"

	"github.com/devicectl/devicectl/device"
)

// readyWait is how long run waits for its first registration before telling systemd it is ready
// anyway: a unit whose server is down must still start (and be seen backing off), not time out
// and be restarted in a loop.
var readyWait = 30 * time.Second

// sdNotifier speaks sd_notify for a Type=notify unit. READY=1 goes out at the first registration,
// or after readyWait with a STATUS= saying what it still waits for; STATUS= follows the session
// loop; WATCHDOG=1 is sent at half the unit's WatchdogSec only while check says the loop is
// healthy, so a stuck loop is restarted by systemd; STOPPING=1 when ctx ends. Outside systemd (no
// NOTIFY_SOCKET) it sends nothing.
type sdNotifier struct {
	log *slog.Logger

	mu     sync.Mutex
	ready  bool
	server string // changed by a reload

	wg sync.WaitGroup
}

func startSystemd(ctx context.Context, server string, check func() error, log *slog.Logger) *sdNotifier {
	n := &sdNotifier{log: log.With("component", "systemd"), server: server}
	interval, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		n.log.Warn("reading the systemd watchdog settings", "err", err)
	}
	n.wg.Go(func() {
		var tick <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval / 2)
			defer t.Stop()
			tick = t.C
		}
		wait := time.NewTimer(readyWait)
		defer wait.Stop()
		var sick error // the last reason the watchdog was not fed; logged when it changes
		for {
			select {
			case <-tick:
				err := check()
				if err == nil {
					if sick != nil {
						n.log.Info("healthy again; feeding the watchdog")
					}
					n.notify(sd.SdNotifyWatchdog)
				} else if sick == nil || sick.Error() != err.Error() {
					n.log.Warn("not feeding the watchdog: the session loop is stuck", "why", err)
				}
				sick = err
			case <-wait.C:
				n.becomeReady("STATUS=started; still waiting for the first registration with " + n.serverURL())
			case <-ctx.Done():
				n.notify(sd.SdNotifyStopping)
				return
			}
		}
	})
	return n
}

// state is the agent's OnState hook: it keeps STATUS= current and says READY=1 at the first
// registration.
func (n *sdNotifier) state(st device.State) {
	server := n.serverURL()
	var status string
	switch st {
	case device.Connecting:
		status = "connecting to " + server
	case device.Registering:
		status = "connected; registering the tools with " + server
	case device.Registered:
		if status := "STATUS=registered with " + server; !n.becomeReady(status) {
			n.notify(status)
		}
		return
	case device.BackingOff:
		status = "not connected to " + server + "; backing off before the next try"
	case device.Stopping:
		status = "stopping: letting running calls finish"
	default:
		return
	}
	n.notify("STATUS=" + status)
}

// becomeReady sends READY=1 with status the first time it is called, and reports whether it did.
func (n *sdNotifier) becomeReady(status string) bool {
	n.mu.Lock()
	first := !n.ready
	n.ready = true
	n.mu.Unlock()
	if first {
		n.notify(sd.SdNotifyReady + "\n" + status)
	}
	return first
}

func (n *sdNotifier) serverURL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.server
}

func (n *sdNotifier) setServer(url string) {
	n.mu.Lock()
	n.server = url
	n.mu.Unlock()
}

// reloading tells systemd a reload (SIGHUP) has begun; reloaded that it is over. systemd 253 and
// later want MONOTONIC_USEC with RELOADING=1 to match the reload to its request. Before the unit
// is ready there is nothing to say: READY=1 is still to come.
func (n *sdNotifier) reloading() {
	if n.isReady() {
		n.notify(sd.SdNotifyReloading + "\nMONOTONIC_USEC=" + strconv.FormatInt(monotonicUsec(), 10))
	}
}

func (n *sdNotifier) reloaded() {
	if n.isReady() {
		n.notify(sd.SdNotifyReady)
	}
}

func (n *sdNotifier) isReady() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ready
}

func (n *sdNotifier) notify(state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		n.log.Warn("telling systemd", "state", state, "err", err)
	}
}

// wait returns once the notifier's goroutine has; call it after ctx is done.
func (n *sdNotifier) wait() { n.wg.Wait() }
