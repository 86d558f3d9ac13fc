package reminders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Devices is how the scheduler reaches devices: the agent's hub.
type Devices interface {
	// Say shows and speaks text on the device mac as a reply with no turn (an mcp/ai/message
	// final); an error means it did not reach the device.
	Say(mac, text string) error
	// Online reports whether mac is registered now.
	Online(mac string) bool
}

// SchedulerOptions configure NewScheduler.
type SchedulerOptions struct {
	Store    *Store
	Devices  Devices
	Location *time.Location // agent.timezone; nil: time.Local
	// Grace is how long after its time an occurrence still reaches a device that was away;
	// after it, the occurrence is missed. 0: 10 minutes.
	Grace time.Duration
	// Poll is how often the store is read for reminders another process set; 0: 30 s.
	Poll time.Duration
	// OnSaid, when set, is told of each occurrence said (A2A push notifications).
	OnSaid func(Reminder)
	Logger *slog.Logger
}

// DefaultGrace is agent.reminders.grace's default.
const DefaultGrace = 10 * time.Minute

// claimFor is how long a claim holds an occurrence: far longer than saying it takes, and the
// most a dead process can delay it.
const claimFor = 30 * time.Second

// retryAway is how often an occurrence whose device is away is tried again within the grace.
const retryAway = 2 * time.Second

// Scheduler says reminders when they are due. Run it once; Nudge it when a reminder is set or a
// device comes.
type Scheduler struct {
	o     SchedulerOptions
	log   *slog.Logger
	nudge chan struct{}
}

// NewScheduler returns a scheduler; o.Store and o.Devices are required.
func NewScheduler(o *SchedulerOptions) (*Scheduler, error) {
	if o == nil || o.Store == nil || o.Devices == nil {
		return nil, errors.New("reminders: NewScheduler needs a Store and Devices")
	}
	opts := *o
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Poll <= 0 {
		opts.Poll = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{o: opts, log: opts.Logger.With("component", "reminders"), nudge: make(chan struct{}, 1)}, nil
}

// Location is the time zone reminders are set and said in.
func (s *Scheduler) Location() *time.Location { return s.o.Location }

// Nudge makes Run look at the store now: a reminder was set, or a device registered.
func (s *Scheduler) Nudge() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Run says reminders as they come due, until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	for {
		now := time.Now()
		if err := s.fireDue(ctx, now); err != nil && ctx.Err() == nil {
			s.log.Warn("saying due reminders", "err", err)
		}
		wait := s.o.Poll
		if next, ok, err := s.o.Store.NextDue(ctx); err == nil && ok {
			wait = min(wait, max(time.Until(next), 0))
		}
		if wait <= 0 {
			wait = 10 * time.Millisecond // due but held by another process's claim: look again shortly
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-s.nudge:
			t.Stop()
		case <-t.C:
		}
	}
}

// fireDue claims each due occurrence and says it, keeps it for a device that is away, or records
// it missed.
func (s *Scheduler) fireDue(ctx context.Context, now time.Time) error {
	due, err := s.o.Store.Due(ctx, now, s.o.Location)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range due {
		ok, err := s.o.Store.Claim(ctx, r, now, now.Add(claimFor))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // another process has it
		}
		errs = append(errs, s.settle(ctx, r, now))
	}
	return errors.Join(errs...)
}

func (s *Scheduler) settle(ctx context.Context, r Reminder, now time.Time) error {
	log := s.log.With("id", r.ID, "mac", r.MAC)
	retry := now.Add(retryAway)
	if end := r.Due.Add(s.o.Grace + time.Millisecond); end.Before(retry) {
		retry = end // the last try is just past the grace: then it is missed
	}
	if s.o.Devices.Online(r.MAC) {
		// Recorded as said before it is said, so that a person who hears it and asks at once what
		// reminders are left is not told of it; put back if it did not reach the device.
		moved, err := s.o.Store.Settle(ctx, r, false, now, s.o.Location)
		if err != nil || !moved {
			return err
		}
		err = s.o.Devices.Say(r.MAC, Announcement(r))
		if err == nil {
			log.Info("reminder said", "text", r.Text, "due", r.Due.Format(time.RFC3339))
			if s.o.OnSaid != nil {
				s.o.OnSaid(r)
			}
			return nil
		}
		log.Debug("reminder not said", "err", err)
		if err := s.o.Store.Unsettle(ctx, r, retry); err != nil {
			return err
		}
	}
	if now.Sub(r.Due) <= s.o.Grace {
		return s.o.Store.Release(ctx, r, retry)
	}
	log.Info("reminder missed: its device was away", "text", r.Text, "due", r.Due.Format(time.RFC3339), "grace", s.o.Grace)
	_, err := s.o.Store.Settle(ctx, r, true, now, s.o.Location)
	return err
}

// Announcement is what a device says when r is due.
func Announcement(r Reminder) string {
	zh := r.Lang == "zh"
	switch {
	case r.Timer && r.Text == "" && zh:
		return fmt.Sprintf("时间到！%s的计时结束了。", SpanZH(r.Length))
	case r.Timer && r.Text == "":
		return fmt.Sprintf("Time's up: your timer for %s is done.", SpanEN(r.Length))
	case zh:
		return "提醒：" + r.Text
	}
	return "Reminder: " + r.Text
}

// MissedNotice is what a device says, before its next reply, of the occurrences it missed; ""
// for none.
func MissedNotice(missed []MissedOccurrence) string {
	if len(missed) == 0 {
		return ""
	}
	var zh, en []string
	for _, m := range missed {
		what := m.Text
		if what == "" {
			if m.Lang == "zh" {
				what = SpanZH(m.Length) + "计时"
			} else {
				what = "the timer for " + SpanEN(m.Length)
			}
		}
		if m.Lang == "zh" {
			zh = append(zh, fmt.Sprintf("%s（%s）", what, m.At.Format("15:04")))
		} else {
			en = append(en, fmt.Sprintf("%s (%s)", what, m.At.Format("15:04")))
		}
	}
	var parts []string
	if len(zh) > 0 {
		parts = append(parts, "你错过了提醒："+strings.Join(zh, "、")+"。")
	}
	if len(en) > 0 {
		parts = append(parts, "You missed: "+strings.Join(en, ", ")+".")
	}
	return strings.Join(parts, " ")
}

// SpanZH says a length of time in Chinese: 10分钟, 半小时, 1小时30分钟, 45秒.
func SpanZH(d time.Duration) string {
	d = d.Round(time.Second)
	if d == 30*time.Minute {
		return "半小时"
	}
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%d小时", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%d分钟", m)
	}
	if sec > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%d秒", sec)
	}
	return b.String()
}

// SpanEN says a length of time in English: "5 minutes", "1 hour 30 minutes".
func SpanEN(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	var parts []string
	unit := func(n int, one string) {
		if n == 1 {
			parts = append(parts, "1 "+one)
		} else if n > 1 {
			parts = append(parts, fmt.Sprintf("%d %ss", n, one))
		}
	}
	unit(h, "hour")
	unit(m, "minute")
	unit(sec, "second")
	if len(parts) == 0 {
		return "0 seconds"
	}
	return strings.Join(parts, " ")
}
