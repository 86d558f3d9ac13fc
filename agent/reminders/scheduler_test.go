package reminders

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
)

const mac = "AA-BB-CC-DD-EE-01"

// devices is a hub stand-in: which devices are online, and what each was told, when.
type devices struct {
	mu     sync.Mutex
	online map[string]bool
	said   []said
	fail   int // the next this many Says fail, as a line dropping mid-send does
}

type said struct {
	mac, text string
	at        time.Time
}

func (d *devices) Say(m, text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail > 0 {
		d.fail--
		return errors.New("the line dropped")
	}
	d.said = append(d.said, said{m, text, time.Now()})
	return nil
}

func (d *devices) Online(m string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.online[m]
}

func (d *devices) set(m string, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.online[m] = on
}

func (d *devices) heard() []said {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.said)
}

// rig is a store and a running scheduler in a synctest bubble.
type rig struct {
	t      *testing.T
	path   string // the database (storetest.Where)
	db     *store.DB
	store  *Store
	sched  *Scheduler
	dev    *devices
	loc    *time.Location
	cancel context.CancelFunc
	done   chan struct{}
}

func newRig(t *testing.T, path string, dev *devices, loc *time.Location) *rig {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := NewScheduler(&SchedulerOptions{Store: st, Devices: dev, Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &rig{t: t, path: path, db: db, store: st, sched: sched, dev: dev, loc: loc, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		sched.Run(ctx)
	}()
	return r
}

// stop ends the scheduler and closes its database, as a process stopping does.
func (r *rig) stop() {
	r.cancel()
	<-r.done
	r.db.Close()
}

func (r *rig) add(rem Reminder) Reminder {
	r.t.Helper()
	if rem.MAC == "" {
		rem.MAC = mac
	}
	if rem.UserID == "" {
		rem.UserID = "u"
	}
	if rem.Lang == "" {
		rem.Lang = "zh"
	}
	rem.Created = time.Now()
	got, err := r.store.Add(context.Background(), rem)
	if err != nil {
		r.t.Fatal(err)
	}
	r.sched.Nudge()
	return got
}

// sleepTo advances the bubble's clock to t and lets the scheduler act.
func sleepTo(t time.Time) {
	time.Sleep(time.Until(t))
	synctest.Wait()
}

func online() *devices { return &devices{online: map[string]bool{mac: true}} }

func TestRelativeAndTimer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			dev := online()
			r := newRig(t, path, dev, time.UTC)
			defer r.stop()
			start := time.Now()
			r.add(Reminder{Text: "喝水", Due: start.Add(10 * time.Minute)})
			r.add(Reminder{Timer: true, Length: 5 * time.Minute, Due: start.Add(5 * time.Minute)})
			r.add(Reminder{Timer: true, Length: 3 * time.Minute, Lang: "en", Due: start.Add(3 * time.Minute)})
			sleepTo(start.Add(10*time.Minute + time.Second))
			got := dev.heard()
			want := []said{
				{mac, "Time's up: your timer for 3 minutes is done.", start.Add(3 * time.Minute)},
				{mac, "时间到！5分钟的计时结束了。", start.Add(5 * time.Minute)},
				{mac, "提醒：喝水", start.Add(10 * time.Minute)},
			}
			if !slices.Equal(got, want) {
				t.Errorf("said %v\nwant %v", got, want)
			}
			if l, _ := r.store.List(context.Background(), "u", time.UTC); len(l) != 0 {
				t.Errorf("still pending: %v", l)
			}
		})
	})
}

func TestDailyWeeklyAcrossMidnightAndDST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Test(t, func(t *testing.T) {
			// The bubble starts at 2000-01-01 00:00 UTC; go to the Friday before the spring-forward
			// of 2026-03-08 in New York, at 23:00 local.
			sleepTo(time.Date(2026, 3, 6, 23, 0, 0, 0, ny))
			dev := online()
			r := newRig(t, path, dev, ny)
			defer r.stop()
			daily := Every{Hour: 8}
			weekly := Every{Weekly: true, Weekday: time.Monday, Hour: 9}
			r.add(Reminder{Text: "吃药", Every: &daily, Due: daily.Next(time.Now(), ny)})
			r.add(Reminder{Text: "交周报", Every: &weekly, Due: weekly.Next(time.Now(), ny)})
			sleepTo(time.Date(2026, 3, 16, 12, 0, 0, 0, ny))
			var pills, reports []string
			for _, s := range dev.heard() {
				at := s.at.In(ny).Format("Mon 01-02 15:04 MST")
				switch s.text {
				case "提醒：吃药":
					pills = append(pills, at)
				case "提醒：交周报":
					reports = append(reports, at)
				default:
					t.Errorf("said %q", s.text)
				}
			}
			wantPills := []string{"Sat 03-07 08:00 EST", "Sun 03-08 08:00 EDT", "Mon 03-09 08:00 EDT", "Tue 03-10 08:00 EDT",
				"Wed 03-11 08:00 EDT", "Thu 03-12 08:00 EDT", "Fri 03-13 08:00 EDT", "Sat 03-14 08:00 EDT", "Sun 03-15 08:00 EDT", "Mon 03-16 08:00 EDT"}
			if !slices.Equal(pills, wantPills) {
				t.Errorf("daily at 08:00 said at\n%v\nwant\n%v", pills, wantPills)
			}
			if want := []string{"Mon 03-09 09:00 EDT", "Mon 03-16 09:00 EDT"}; !slices.Equal(reports, want) {
				t.Errorf("weekly on Monday at 09:00 said at %v, want %v", reports, want)
			}
		})
	})
}

// A clock time the spring-forward skips is said once, just after the gap.
func TestEveryInTheGap(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	e := Every{Hour: 2, Minute: 30}
	got := e.Next(time.Date(2026, 3, 7, 12, 0, 0, 0, ny), ny)
	if got.Format("01-02 15:04 MST") != "03-08 03:30 EDT" {
		t.Errorf("02:30 on the day it does not exist: %s", got.Format("01-02 15:04 MST"))
	}
	if next := e.Next(got, ny); next.Format("01-02 15:04 MST") != "03-09 02:30 EDT" {
		t.Errorf("the day after: %s", next.Format("01-02 15:04 MST"))
	}
	// Falling back, 01:30 happens twice; it is said once, at the first.
	e = Every{Hour: 1, Minute: 30}
	first := e.Next(time.Date(2026, 10, 31, 12, 0, 0, 0, ny), ny)
	second := e.Next(first, ny)
	if first.Format("01-02 15:04 MST") != "11-01 01:30 EDT" || second.Format("01-02 15:04 MST") != "11-02 01:30 EST" {
		t.Errorf("across fall-back: %s then %s", first.Format("01-02 15:04 MST"), second.Format("01-02 15:04 MST"))
	}
}

// A reminder set before a restart is said after it, by the new process.
func TestRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			dev := online()
			r := newRig(t, path, dev, time.UTC)
			start := time.Now()
			r.add(Reminder{Text: "开会", Due: start.Add(time.Hour)})
			sleepTo(start.Add(20 * time.Minute))
			r.stop()
			sleepTo(start.Add(30 * time.Minute)) // down for ten minutes
			r = newRig(t, path, dev, time.UTC)
			defer r.stop()
			sleepTo(start.Add(2 * time.Hour))
			if got := dev.heard(); len(got) != 1 || got[0].text != "提醒：开会" || !got[0].at.Equal(start.Add(time.Hour)) {
				t.Errorf("said %v; want 提醒：开会 once, at its time", got)
			}
		})
	})
}

// A device away when a reminder is due gets it when it comes back within the grace; past the
// grace the reminder is missed, and told once at the device's next turn.
func TestDeviceAway(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			dev := online()
			dev.set(mac, false)
			r := newRig(t, path, dev, time.UTC)
			defer r.stop()
			start := time.Now()
			r.add(Reminder{Text: "关火", Due: start.Add(time.Minute)})
			r.add(Reminder{Text: "stretch", Lang: "en", Due: start.Add(2 * time.Minute)})
			sleepTo(start.Add(5 * time.Minute))
			if got := dev.heard(); len(got) != 0 {
				t.Fatalf("said to a device that is away: %v", got)
			}
			dev.set(mac, true)
			r.sched.Nudge() // the hub tells of the device's registration
			synctest.Wait()
			back := time.Now()
			sleepTo(back.Add(3 * time.Second))
			got := dev.heard()
			texts := []string{}
			for _, s := range got {
				texts = append(texts, s.text)
				if s.at.Sub(back) > retryAway {
					t.Errorf("%q said %v after the device came back", s.text, s.at.Sub(back))
				}
			}
			slices.Sort(texts)
			if !slices.Equal(texts, []string{"Reminder: stretch", "提醒：关火"}) {
				t.Fatalf("on coming back within the grace: %v", got)
			}

			dev.set(mac, false)
			r.add(Reminder{Text: "取快递", Due: time.Now().Add(time.Minute)})
			sleepTo(time.Now().Add(time.Minute + DefaultGrace + 5*time.Second))
			dev.set(mac, true)
			r.sched.Nudge()
			sleepTo(time.Now().Add(time.Minute))
			if got := dev.heard(); len(got) != 2 {
				t.Errorf("a missed reminder was said late: %v", got[2:])
			}
			missed, err := r.store.TakeMissed(context.Background(), mac, time.UTC)
			if err != nil || len(missed) != 1 || missed[0].Text != "取快递" {
				t.Fatalf("missed %v, %v", missed, err)
			}
			if n := MissedNotice(missed); n != "你错过了提醒：取快递（"+missed[0].At.Format("15:04")+"）。" {
				t.Errorf("notice %q", n)
			}
			if again, _ := r.store.TakeMissed(context.Background(), mac, time.UTC); len(again) != 0 {
				t.Errorf("told twice: %v", again)
			}
		})
	})
}

func TestListAndCancel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			dev := online()
			r := newRig(t, path, dev, time.UTC)
			defer r.stop()
			now := time.Now()
			water := r.add(Reminder{Text: "喝水", Due: now.Add(time.Hour)})
			r.add(Reminder{Text: "喝茶", Due: now.Add(30 * time.Minute)})
			r.add(Reminder{Text: "开会", Due: now.Add(2 * time.Hour), UserID: "someone else"})
			l, err := r.store.List(context.Background(), "u", time.UTC)
			if err != nil || len(l) != 2 || l[0].Text != "喝茶" || l[1].Text != "喝水" {
				t.Fatalf("list %v, %v; want 喝茶 then 喝水", l, err)
			}
			if ok, _ := r.store.Cancel(context.Background(), "someone else", water.ID); ok {
				t.Error("another user canceled u's reminder")
			}
			if ok, _ := r.store.Cancel(context.Background(), "u", water.ID); !ok {
				t.Error("cancel failed")
			}
			if ok, _ := r.store.Cancel(context.Background(), "u", water.ID); ok {
				t.Error("canceled twice")
			}
			gone, _ := r.store.CancelWhere(context.Background(), "u", "", time.UTC)
			if len(gone) != 1 || gone[0].Text != "喝茶" {
				t.Errorf("cancel all: %v", gone)
			}
			sleepTo(now.Add(3 * time.Hour))
			if got := dev.heard(); len(got) != 1 || got[0].text != "提醒：开会" {
				t.Errorf("said %v; want only the other user's", got)
			}
		})
	})
}

// Two processes on one store say each occurrence once.
func TestTwoProcessesOneStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			dev := online()
			a := newRig(t, path, dev, time.UTC)
			defer a.stop()
			b := newRig(t, path, dev, time.UTC)
			defer b.stop()
			start := time.Now()
			daily := Every{Hour: 7}
			for i := range 20 {
				x := a
				if i%2 == 1 {
					x = b
				}
				x.add(Reminder{Text: "one-off", Due: start.Add(time.Duration(i) * time.Minute)})
			}
			a.add(Reminder{Text: "daily", Every: &daily, Due: daily.Next(start, time.UTC)})
			b.sched.Nudge()
			sleepTo(start.Add(3*24*time.Hour + time.Minute))
			counts := map[string]int{}
			for _, s := range dev.heard() {
				counts[s.text]++
			}
			if counts["提醒：one-off"] != 20 || counts["提醒：daily"] != 3 {
				t.Errorf("said %v; want each one-off once (20) and the daily once a day (3)", counts)
			}
		})
	})
}

// A reminder that does not reach a device that looked online is put back and said on the next
// try; a list asked for once it is said no longer shows it.
func TestSayFailsThenRetried(t *testing.T) {
	storetest.Each(t, func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			dev := online()
			dev.fail = 1
			r := newRig(t, path, dev, time.UTC)
			defer r.stop()
			start := time.Now()
			r.add(Reminder{Text: "喝水", Due: start.Add(time.Minute)})
			sleepTo(start.Add(time.Minute + retryAway + time.Second))
			got := dev.heard()
			if len(got) != 1 || got[0].text != "提醒：喝水" || !got[0].at.Equal(start.Add(time.Minute+retryAway)) {
				t.Fatalf("said %v; want 提醒：喝水 once, %v after its time", got, retryAway)
			}
			if l, _ := r.store.List(context.Background(), "u", time.UTC); len(l) != 0 {
				t.Errorf("still listed once said: %v", l)
			}
		})
	})
}

// Processes racing for one occurrence (each its own DB on one database): exactly one claims it,
// and exactly one takes each missed occurrence.
func TestClaimExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		const processes, rounds = 4, 20
		var stores []*Store
		for range processes {
			st, err := OpenStore(t.Context(), storetest.Open(t, where))
			if err != nil {
				t.Fatal(err)
			}
			stores = append(stores, st)
		}
		now := time.Now()
		for round := range rounds {
			r, err := stores[0].Add(t.Context(), Reminder{UserID: "u", MAC: mac, Text: "喝水", Lang: "zh",
				Due: now.Add(-time.Second), Created: now})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stores[0].Settle(t.Context(), r, true, now, time.UTC); err != nil {
				t.Fatal(err)
			}
			r2, err := stores[0].Add(t.Context(), Reminder{UserID: "u", MAC: mac, Text: "开会", Lang: "zh",
				Due: now.Add(-time.Second), Created: now})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			claims := make([]bool, processes)
			missed := make([]int, processes)
			errs := make([]error, processes)
			for i, st := range stores {
				wg.Go(func() {
					var e1, e2 error
					claims[i], e1 = st.Claim(context.Background(), r2, now, now.Add(time.Minute))
					m, e2 := st.TakeMissed(context.Background(), mac, time.UTC)
					missed[i], errs[i] = len(m), errors.Join(e1, e2)
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			won, took := 0, 0
			for i := range processes {
				if claims[i] {
					won++
				}
				took += missed[i]
			}
			if won != 1 || took != 1 {
				t.Fatalf("round %d: %d processes claimed the occurrence, %d took the missed one; want 1 and 1", round, won, took)
			}
		}
	})
}
