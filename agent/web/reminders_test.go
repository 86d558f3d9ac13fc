//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/web"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/protocol"
)

// fakeReminders has n reminders on every device and records what the page asks of it.
type fakeReminders struct {
	n           int
	announceErr error

	mu        sync.Mutex
	listed    []string
	canceled  []string
	announced []string
}

var _ web.Reminders = (*fakeReminders)(nil)

func (f *fakeReminders) Reminders(_ context.Context, mac string) ([]web.Reminder, error) {
	f.mu.Lock()
	f.listed = append(f.listed, mac)
	f.mu.Unlock()
	due := time.Date(2026, 11, 26, 19, 0, 0, 0, time.FixedZone("CST", 8*3600))
	out := make([]web.Reminder, f.n)
	for i := range out {
		out[i] = web.Reminder{ID: fmt.Sprintf("r%d", i), Text: fmt.Sprintf("thing %d", i), Due: due.Add(time.Duration(i) * time.Minute)}
	}
	if f.n > 0 {
		out[0].Every = "every day at 19:00"
	}
	return out, nil
}

func (f *fakeReminders) CancelReminder(_ context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.canceled = append(f.canceled, id)
	return id == "r1", nil
}

func (f *fakeReminders) Announce(_ context.Context, mac, text string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.announceErr != nil {
		return nil, f.announceErr
	}
	f.announced = append(f.announced, mac+" "+text)
	return []string{limitsMAC}, nil
}

// The reminders' routes are the page's: behind the token, POSTs same-origin only; a device's list
// is bounded; an announcement the agent refuses is the page's 400 with the reason.
func TestRemindersRoutes(t *testing.T) {
	leakcheck.Check(t)
	const token = "tok-7d1e"
	f := &fakeReminders{n: 60}
	srv, _ := limitsServer(t, &web.Options{Token: token, Reminders: f, RemindersEvery: 3 * time.Second}, nil)
	bearer := map[string]string{"Authorization": "Bearer " + token}
	req, _ := http.NewRequest("GET", srv.URL+"/web/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	live, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Body.Close()
	events := sseEvents(bufio.NewReader(live.Body))
	e, _ := events()
	var snap struct {
		Reminders bool  `json:"reminders"`
		Every     int64 `json:"reminders_every_ms"`
	}
	if err := json.Unmarshal([]byte(e[1]), &snap); err != nil || !snap.Reminders || snap.Every != 3000 {
		t.Errorf("the snapshot says reminders %+v (%v), want on, read every 3000 ms", snap, err)
	}
	d := dialDevice(t, srv, bigDevice(0))
	if _, err := d.Register(t.Context(), limitsMAC, deviceTools(0)); err != nil {
		t.Fatal(err)
	}
	for e, ok := events(); !ok || e[0] != "device"; e, ok = events() {
		if !ok {
			t.Fatal("the stream ended before the device was shown")
		}
	}

	for _, c := range []struct {
		method, path, body string
		header             map[string]string
		want               int
	}{
		{"GET", "/web/reminders", "", nil, http.StatusUnauthorized},
		{"POST", "/web/reminders/r1/cancel", "", nil, http.StatusUnauthorized},
		{"POST", "/web/announce", `{"text":"wake up"}`, map[string]string{"Content-Type": "application/json"}, http.StatusUnauthorized},
		{"POST", "/web/reminders/r1/cancel", "", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"POST", "/web/announce", `{"text":"wake up"}`, map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"POST", "/web/announce", `{"text":"  "}`, bearer, http.StatusBadRequest},
	} {
		if resp, body := do(t, c.method, srv.URL+c.path, c.body, c.header); resp.StatusCode != c.want {
			t.Errorf("%s %s with %v: %s %q, want %d", c.method, c.path, c.header, resp.Status, body, c.want)
		}
	}
	f.mu.Lock()
	if len(f.listed)+len(f.canceled)+len(f.announced) > 0 {
		t.Errorf("refused requests reached the reminders: listed %q, canceled %q, announced %q", f.listed, f.canceled, f.announced)
	}
	f.mu.Unlock()

	resp, body := do(t, "GET", srv.URL+"/web/reminders", "", bearer)
	var list struct {
		Devices []struct {
			MAC       string
			More      int
			Reminders []struct{ ID, Text, Due, When, Every string }
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != 200 || len(list.Devices) != 1 {
		t.Fatalf("GET /web/reminders: %s %.200q (%v)", resp.Status, body, err)
	}
	got := list.Devices[0]
	if got.MAC != limitsMAC || len(got.Reminders) != 50 || got.More != 10 {
		t.Errorf("the device's list: %s with %d reminders and %d more, want %s with 50 and 10 more", got.MAC, len(got.Reminders), got.More, limitsMAC)
	}
	if r := got.Reminders[0]; r.When != "Thu 26 Nov 19:00" || r.Due != "2026-11-26T19:00:00+08:00" || r.Every != "every day at 19:00" || r.Text != "thing 0" {
		t.Errorf("the first reminder reads %+v", r)
	}

	if resp, body := do(t, "POST", srv.URL+"/web/reminders/r1/cancel", "", bearer); resp.StatusCode != 200 || !strings.Contains(body, `"canceled":true`) {
		t.Errorf("canceling r1: %s %q", resp.Status, body)
	}
	if resp, body := do(t, "POST", srv.URL+"/web/reminders/r9/cancel", "", bearer); resp.StatusCode != 200 || !strings.Contains(body, `"canceled":false`) {
		t.Errorf("canceling r9, which is not to come: %s %q", resp.Status, body)
	}
	if resp, body := do(t, "POST", srv.URL+"/web/announce", `{"text":" wake up ","mac":"`+limitsMAC+`"}`, bearer); resp.StatusCode != 200 || !strings.Contains(body, `"said":["`+limitsMAC+`"]`) {
		t.Errorf("announcing: %s %q", resp.Status, body)
	}
	f.mu.Lock()
	if strings.Join(f.canceled, ",") != "r1,r9" || strings.Join(f.announced, ",") != limitsMAC+" wake up" {
		t.Errorf("canceled %q, announced %q", f.canceled, f.announced)
	}
	f.announceErr = &agent.ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: "several devices are registered: name one of A, B"}
	f.mu.Unlock()
	if resp, body := do(t, "POST", srv.URL+"/web/announce", `{"text":"wake up"}`, bearer); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "several devices") {
		t.Errorf("an announcement the agent refuses: %s %q, want 400 with its reason", resp.Status, body)
	}
}

// Without Options.Reminders the page has no reminders' routes, and its snapshot says so.
func TestNoReminders(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := newHandler(t, "")
	for _, p := range []string{"GET /web/reminders", "POST /web/announce", "POST /web/reminders/r1/cancel"} {
		m, path, _ := strings.Cut(p, " ")
		if resp, _ := do(t, m, srv.URL+path, `{"text":"x"}`, map[string]string{"Content-Type": "application/json"}); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s without reminders: %s, want 404", p, resp.Status)
		}
	}
}

// Without a token the reminders' routes, like the page, answer only loopback Host names: a site
// that rebinds its name to 127.0.0.1 cannot read or cancel them.
func TestRemindersRebinding(t *testing.T) {
	leakcheck.Check(t)
	f := &fakeReminders{n: 1}
	srv, _ := limitsServer(t, &web.Options{Reminders: f}, nil)
	rebound := map[string]string{"Host": "rebound.example:80", "Content-Type": "application/json"}
	for _, p := range []string{"GET /web/reminders", "POST /web/reminders/r1/cancel", "POST /web/announce"} {
		m, path, _ := strings.Cut(p, " ")
		if resp, _ := do(t, m, srv.URL+path, `{"text":"x"}`, rebound); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a foreign Host: %s, want 403", p, resp.Status)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.listed)+len(f.canceled)+len(f.announced) > 0 {
		t.Errorf("rebound requests reached the reminders: listed %q, canceled %q, announced %q", f.listed, f.canceled, f.announced)
	}
}
