package reminders

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

type toolRig struct {
	reg    *tools.Registry
	store  *Store
	mu     sync.Mutex
	online []string
	said   []string // mac: text
	now    time.Time
}

// newToolRig registers the tools on the database where names ("" a SQLite one) with the devices
// online.
func newToolRig(t *testing.T, where string, online ...string) *toolRig {
	t.Helper()
	if where == "" {
		where = storetest.Where(t, store.SQLite)
	}
	db := storetest.Open(t, where)
	st, err := OpenStore(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	rig := &toolRig{reg: tools.NewRegistry(), store: st, online: online, now: time.Date(2026, 11, 26, 14, 22, 0, 0, shanghai)}
	sched, err := NewScheduler(&SchedulerOptions{Store: st, Devices: &devices{online: map[string]bool{}}, Location: shanghai})
	if err != nil {
		t.Fatal(err)
	}
	err = RegisterTools(rig.reg, &ToolOptions{
		Scheduler: sched, Store: st,
		Devices: func() []string { rig.mu.Lock(); defer rig.mu.Unlock(); return append([]string(nil), rig.online...) },
		Say: func(mac, text string) error {
			rig.mu.Lock()
			defer rig.mu.Unlock()
			if mac == "AA-BB-CC-DD-EE-99" {
				return errors.New("gone")
			}
			rig.said = append(rig.said, mac+": "+text)
			return nil
		},
		Now: func() time.Time { return rig.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return rig
}

// call runs a tool as the agent does, returning its JSON or its ToolError.
func (r *toolRig) call(t *testing.T, name, input string) (string, *agent.ToolError) {
	t.Helper()
	p, err := r.reg.Prepare(name, json.RawMessage(input))
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	v, err := p.Invoke(context.Background())
	var te *agent.ToolError
	if errors.As(err, &te) {
		return "", te
	}
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	b, _ := json.Marshal(v)
	return string(b), nil
}

func TestSetReminder(t *testing.T) {
	storetest.Each(t, setReminder)
}

func setReminder(t *testing.T, where string) {
	r := newToolRig(t, where, "AA-BB-CC-DD-EE-01")
	for _, tc := range []struct{ input, want string }{
		{`{"text":"喝水","in":"10m","user_id":"u"}`, `"text":"喝水","due":"2026-11-26T14:32:00+08:00","mac":"AA-BB-CC-DD-EE-01","in":"10m0s"`},
		{`{"in":"PT5M","user_id":"u"}`, `"timer":true,"due":"2026-11-26T14:27:00+08:00"`},
		{`{"text":"开会","at":"2026-11-27T08:00","user_id":"u"}`, `"due":"2026-11-27T08:00:00+08:00"`},
		{`{"text":"call mom","at":"2026-11-26T19:00:00Z","user_id":"u"}`, `"due":"2026-11-27T03:00:00+08:00"`},
		{`{"text":"吃药","every":{"repeat":"daily","time":"22:00"},"user_id":"u"}`, `"due":"2026-11-26T22:00:00+08:00","every":"every day at 22:00"`},
		{`{"text":"交周报","every":{"repeat":"weekly","weekday":"monday","time":"09:00"},"user_id":"u"}`, `"due":"2026-11-30T09:00:00+08:00","every":"every Monday at 09:00"`},
	} {
		got, te := r.call(t, "set_reminder", tc.input)
		if te != nil || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s %v; want %s", tc.input, got, te, tc.want)
		}
	}
	for _, tc := range []struct{ input, details string }{
		{`{"text":"x","at":"2026-11-26T09:00","user_id":"u"}`, "at 2026-11-26 09:00 is in the past (it is 2026-11-26 14:22 now)"},
		{`{"text":"x","in":"400d","user_id":"u"}`, "not a duration"},
		{`{"text":"x","in":"9000h","user_id":"u"}`, "further than a year ahead"},
		{`{"text":"x","in":"-5m","user_id":"u"}`, "not in the future"},
		{`{"text":"x","in":"5m","at":"2026-11-27T08:00","user_id":"u"}`, "exactly one of at, in and every (got 2)"},
		{`{"text":"x","user_id":"u"}`, "exactly one of at, in and every (got 0)"},
		{`{"at":"2026-11-27T08:00","user_id":"u"}`, "text is empty"},
		{`{"text":"x","every":{"repeat":"weekly","time":"08:00"},"user_id":"u"}`, `every.weekday "" is not a day of the week`},
		{`{"text":"x","every":{"repeat":"weekly","weekday":"someday","time":"08:00"},"user_id":"u"}`, "is not a day of the week"},
		{`{"text":"x","every":{"repeat":"daily","time":"25:00"},"user_id":"u"}`, "is not a 24-hour HH:MM time"},
		{`{"text":"x","at":"tomorrow","user_id":"u"}`, "is not an ISO 8601 time"},
		{`{"text":"x","in":"5m","user_id":""}`, "user_id is empty"},
		{`{"text":"a\u0000b","in":"5m","user_id":"u"}`, "text is not valid UTF-8 or holds a NUL character"},
		{`{"text":"x","in":"5m","user_id":"u\u0000"}`, "user_id is not valid UTF-8 or holds a NUL character"},
	} {
		got, te := r.call(t, "set_reminder", tc.input)
		if te == nil || te.Code != -32602 || !strings.Contains(te.Details, tc.details) {
			t.Errorf("%s: %s %+v; want -32602 with %q", tc.input, got, te, tc.details)
		}
	}
	list, _ := r.call(t, "list_reminders", `{"user_id":"u"}`)
	var rs []listed
	json.Unmarshal([]byte(list), &rs)
	if len(rs) != 6 || rs[0].Due != "2026-11-26T14:27:00+08:00" || !rs[0].Timer {
		t.Fatalf("list %s", list)
	}
	if got, _ := r.call(t, "cancel_reminder", `{"id":"`+rs[0].ID+`"}`); got != "true" {
		t.Errorf("cancel: %s", got)
	}
	if got, _ := r.call(t, "cancel_reminder", `{"id":"`+rs[0].ID+`"}`); got != "false" {
		t.Errorf("cancel again: %s", got)
	}
}

func TestDeviceChoice(t *testing.T) {
	r := newToolRig(t, "", "AA-BB-CC-DD-EE-02", "AA-BB-CC-DD-EE-01")
	if _, te := r.call(t, "set_reminder", `{"text":"x","in":"5m","user_id":"u"}`); te == nil || te.Details != "several devices are registered (AA-BB-CC-DD-EE-01, AA-BB-CC-DD-EE-02): name one with mac" {
		t.Errorf("several devices, none named: %+v", te)
	}
	if _, te := r.call(t, "announce", `{"text":"开饭了"}`); te == nil || te.Code != -32602 || !strings.Contains(te.Details, "AA-BB-CC-DD-EE-01, AA-BB-CC-DD-EE-02") {
		t.Errorf("announce to several devices, none named: %+v", te)
	}
	if got, te := r.call(t, "announce", `{"text":"开饭了","mac":"all"}`); te != nil || got != `["AA-BB-CC-DD-EE-01","AA-BB-CC-DD-EE-02"]` {
		t.Errorf("announce to all: %s %+v", got, te)
	}
	if got, te := r.call(t, "announce", `{"text":"hello","mac":"aa-bb-cc-dd-ee-02"}`); te != nil || got != `["AA-BB-CC-DD-EE-02"]` {
		t.Errorf("announce to one: %s %+v", got, te)
	}
	if _, te := r.call(t, "announce", `{"text":"hello","mac":"AA-BB-CC-DD-EE-99"}`); te == nil || te.Code != protocol.CodeServerError {
		t.Errorf("announce to a device that cannot hear: %+v", te)
	}
	if _, te := r.call(t, "announce", `{"text":"  "}`); te == nil || te.Details != "text is empty" {
		t.Errorf("empty announcement: %+v", te)
	}
	want := []string{"AA-BB-CC-DD-EE-01: 开饭了", "AA-BB-CC-DD-EE-02: 开饭了", "AA-BB-CC-DD-EE-02: hello"}
	if strings.Join(r.said, "|") != strings.Join(want, "|") {
		t.Errorf("said %q", r.said)
	}
}
