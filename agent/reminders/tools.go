package reminders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// ToolOptions are what the reminder and announce tools need besides the store.
type ToolOptions struct {
	Scheduler *Scheduler
	Store     *Store
	// Devices lists the MACs of the devices registered now.
	Devices func() []string
	// Say shows and speaks text on a device, with no turn (an mcp/ai/message final).
	Say func(mac, text string) error
	// DeviceOf returns the device of the turn a tool was called in ("" when none): the device a
	// reminder or an announcement goes to when none is named.
	DeviceOf func(ctx context.Context) string
	// TaskOf returns the A2A task a tool was called in, for push notifications ("" when none).
	TaskOf func(ctx context.Context) string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// MaxText bounds what a reminder or an announcement says.
const MaxText = 500

type setInput struct {
	Text   string     `json:"text,omitempty" jsonschema:"what to remind of, in the user's words, e.g. 喝水 or call mom; leave it out for a plain timer"`
	At     string     `json:"at,omitempty" jsonschema:"when, as an ISO 8601 date and time: 2026-11-26T19:00 is in the agent's time zone; an offset (+08:00, Z) names another"`
	In     string     `json:"in,omitempty" jsonschema:"after how long, as a duration: 10m, 1h30m, 90s or ISO 8601 PT10M; at most a year"`
	Every  *everyJSON `json:"every,omitempty" jsonschema:"to repeat it: every day or every week at a time"`
	MAC    string     `json:"mac,omitempty" jsonschema:"the device that says it (its MAC); left out: the device of this conversation, or the only one"`
	UserID string     `json:"user_id" jsonschema:"the user the reminder is for"`
}

// setResult is what set_reminder answers: the reminder as it was stored, its time in the
// agent's time zone.
type setResult struct {
	ID    string `json:"id"`
	Text  string `json:"text,omitempty"`
	Timer bool   `json:"timer,omitempty"`
	Due   string `json:"due"`
	Every string `json:"every,omitempty"`
	MAC   string `json:"mac"`
	In    string `json:"in"` // how long from now, for a reply to say
}

type listInput struct {
	UserID string `json:"user_id" jsonschema:"the user whose reminders to list"`
}

type cancelInput struct {
	ID     string `json:"id" jsonschema:"the reminder's id, as set_reminder or list_reminders gave it"`
	UserID string `json:"user_id,omitempty" jsonschema:"the user it belongs to; left out: any user's"`
}

type announceInput struct {
	Text string `json:"text" jsonschema:"what the device says"`
	MAC  string `json:"mac,omitempty" jsonschema:"the device (its MAC), or all for every device; left out: the device of this conversation, or the only one"`
}

func invalid(format string, args ...any) error {
	return &agent.ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: fmt.Sprintf(format, args...)}
}

// The names of the tools RegisterTools adds. agent/mcpserver gives each device a DEVICE__announce
// that calls ToolAnnounce with the device's MAC.
const (
	ToolSet      = "set_reminder"
	ToolList     = "list_reminders"
	ToolCancel   = "cancel_reminder"
	ToolAnnounce = "announce"
)

// RegisterTools adds set_reminder, list_reminders, cancel_reminder and announce to r.
func RegisterTools(r *tools.Registry, o *ToolOptions) error {
	if r == nil || o == nil || o.Store == nil || o.Scheduler == nil || o.Devices == nil || o.Say == nil {
		return errors.New("reminders: RegisterTools needs a registry, a store, a scheduler, Devices and Say")
	}
	t := newToolset(o)
	set, errSet := tools.Func(tools.LocalQuery(ToolSet,
		"Set a reminder or a timer; the device says it when it is due, even with no conversation going on. "+
			"Give exactly one of at (an ISO 8601 time, e.g. 2026-11-26T19:00), in (a duration, e.g. 10m or PT1H30M) or every "+
			"({\"repeat\":\"daily\",\"time\":\"08:00\"} or {\"repeat\":\"weekly\",\"weekday\":\"monday\",\"time\":\"09:00\"}). "+
			"text is what to remind of (\"喝水\", \"call mom\"); a timer is in with no text. Returns the reminder with its id and due time."),
		t.set)
	list, errList := tools.Func(tools.LocalQuery(ToolList,
		"List the user's reminders and timers that are still to come, soonest first: [{\"id\",\"text\",\"due\",\"every\",\"mac\"}]."),
		t.list)
	cancel, errCancel := tools.Func(tools.LocalQuery(ToolCancel,
		"Cancel a reminder or timer by its id (from set_reminder or list_reminders). Returns true when one was canceled, false when there was no such reminder still to come."),
		t.cancel)
	announce, errAnnounce := tools.Func(tools.LocalQuery(ToolAnnounce,
		"Make a device say something now, without being asked: it shows and speaks text. "+
			"mac names the device, or all for every device. Returns the devices that said it."),
		t.announce)
	if err := errors.Join(errSet, errList, errCancel, errAnnounce); err != nil {
		return err
	}
	for _, tool := range []*tools.Tool{set, list, cancel, announce} {
		if err := r.Add(tool); err != nil {
			return err
		}
	}
	return nil
}

type toolset struct{ o ToolOptions }

// newToolset copies o with its unset funcs filled: the tools and the HTTP routes share it.
func newToolset(o *ToolOptions) *toolset {
	opts := *o
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DeviceOf == nil {
		opts.DeviceOf = func(context.Context) string { return "" }
	}
	if opts.TaskOf == nil {
		opts.TaskOf = func(context.Context) string { return "" }
	}
	return &toolset{o: opts}
}

// device picks the device a reminder or announcement goes to: the one named, else the turn's,
// else the only one registered.
func (t *toolset) device(ctx context.Context, mac string) (string, error) {
	online := t.o.Devices()
	switch {
	case mac != "":
		return strings.ToUpper(strings.TrimSpace(mac)), nil
	case t.o.DeviceOf(ctx) != "":
		return t.o.DeviceOf(ctx), nil
	case len(online) == 1:
		return online[0], nil
	case len(online) == 0:
		return "", invalid("no device is registered: name one with mac")
	}
	slices.Sort(online)
	return "", invalid("several devices are registered (%s): name one with mac", strings.Join(online, ", "))
}

func checkText(what, s string, empty bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" && !empty:
		return "", invalid("%s is empty", what)
	case !store.Storable(s):
		return "", invalid("%s is not valid UTF-8 or holds a NUL character", what)
	case utf8.RuneCountInString(s) > MaxText:
		return "", invalid("%s is longer than %d characters", what, MaxText)
	}
	return s, nil
}

// checkUser checks a user_id; empty is allowed when it may be left out.
func checkUser(id string, empty bool) error {
	switch {
	case strings.TrimSpace(id) == "" && !empty:
		return invalid("user_id is empty")
	case !store.Storable(id):
		return invalid("user_id is not valid UTF-8 or holds a NUL character")
	}
	return nil
}

// Lang is the language a text is said in: Chinese when it has a CJK character.
func Lang(s string) string {
	if agent.Chinese(s) {
		return "zh"
	}
	return "en"
}

func (t *toolset) set(ctx context.Context, in setInput) (setResult, error) {
	text, err := checkText("text", in.Text, true)
	if err != nil {
		return setResult{}, err
	}
	if err := checkUser(in.UserID, false); err != nil {
		return setResult{}, err
	}
	given := 0
	for _, s := range []bool{in.At != "", in.In != "", in.Every != nil} {
		if s {
			given++
		}
	}
	if given != 1 {
		return setResult{}, invalid("give exactly one of at, in and every (got %d)", given)
	}
	mac, err := t.device(ctx, in.MAC)
	if err != nil {
		return setResult{}, err
	}
	loc := t.o.Scheduler.Location()
	now := t.o.Now()
	r := Reminder{UserID: in.UserID, MAC: mac, Text: text, Lang: Lang(text), Created: now, Task: t.o.TaskOf(ctx)}
	switch {
	case in.In != "":
		d, err := ParseIn(in.In)
		if err != nil {
			return setResult{}, invalid("%s", err)
		}
		r.Due, r.Length, r.Timer = now.Add(d), d, text == ""
	case in.At != "":
		at, err := ParseAt(in.At, loc)
		if err != nil {
			return setResult{}, invalid("%s", err)
		}
		if !at.After(now) {
			return setResult{}, invalid("at %s is in the past (it is %s now)", at.In(loc).Format("2006-01-02 15:04"), now.In(loc).Format("2006-01-02 15:04"))
		}
		if at.Sub(now) > MaxIn {
			return setResult{}, invalid("at %s is further than a year ahead", at.In(loc).Format("2006-01-02"))
		}
		r.Due = at
	default:
		e, err := in.Every.every()
		if err != nil {
			return setResult{}, invalid("%s", err)
		}
		r.Every, r.Due = &e, e.Next(now, loc)
	}
	if text == "" && !r.Timer {
		return setResult{}, invalid("text is empty: say what to remind of (only a timer, set with in, has none)")
	}
	if r.Lang == "en" && text == "" {
		r.Lang = "zh" // a timer has no words of its own: as the agent's default language
	}
	stored, err := t.o.Store.Add(ctx, r)
	if err != nil {
		return setResult{}, err
	}
	t.o.Scheduler.Nudge()
	res := setResult{ID: stored.ID, Text: stored.Text, Timer: stored.Timer, Due: stored.Due.In(loc).Format(time.RFC3339), MAC: stored.MAC,
		In: stored.Due.Sub(now).Round(time.Second).String()}
	if stored.Every != nil {
		res.Every = stored.Every.String()
	}
	return res, nil
}

// listed is one reminder as list_reminders answers it.
type listed struct {
	ID    string `json:"id"`
	Text  string `json:"text,omitempty"`
	Timer bool   `json:"timer,omitempty"`
	Due   string `json:"due"`
	Every string `json:"every,omitempty"`
	MAC   string `json:"mac"`
}

func (t *toolset) list(ctx context.Context, in listInput) ([]listed, error) {
	if err := checkUser(in.UserID, false); err != nil {
		return nil, err
	}
	loc := t.o.Scheduler.Location()
	rs, err := t.o.Store.List(ctx, in.UserID, loc)
	if err != nil {
		return nil, err
	}
	out := make([]listed, 0, len(rs))
	for _, r := range rs {
		l := listed{ID: r.ID, Text: r.Text, Timer: r.Timer, Due: r.Due.In(loc).Format(time.RFC3339), MAC: r.MAC}
		if r.Every != nil {
			l.Every = r.Every.String()
		}
		out = append(out, l)
	}
	return out, nil
}

func (t *toolset) cancel(ctx context.Context, in cancelInput) (bool, error) {
	if strings.TrimSpace(in.ID) == "" {
		return false, invalid("id is empty")
	}
	if err := checkUser(in.UserID, true); err != nil {
		return false, err
	}
	if !store.Storable(in.ID) {
		return false, invalid("id is not valid UTF-8 or holds a NUL character")
	}
	return t.o.Store.Cancel(ctx, in.UserID, strings.TrimSpace(in.ID))
}

func (t *toolset) announce(ctx context.Context, in announceInput) ([]string, error) {
	text, err := checkText("text", in.Text, false)
	if err != nil {
		return nil, err
	}
	var macs []string
	if strings.EqualFold(strings.TrimSpace(in.MAC), "all") {
		macs = t.o.Devices()
		slices.Sort(macs)
		if len(macs) == 0 {
			return nil, invalid("no device is registered")
		}
	} else {
		mac, err := t.device(ctx, in.MAC)
		if err != nil {
			return nil, err
		}
		macs = []string{mac}
	}
	said := []string{}
	var errs []error
	for _, mac := range macs {
		if err := t.o.Say(mac, text); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", mac, err))
			continue
		}
		said = append(said, mac)
	}
	if len(said) == 0 {
		return nil, &agent.ToolError{Code: protocol.CodeServerError, Message: "no device said it", Details: errors.Join(errs...).Error()}
	}
	return said, nil
}
