//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The page's reminders' routes over the agent server's own reminders (no browser): one set by
// an MCP host is listed, canceled from the page it leaves the store, and the page's announcement
// reaches the device as a final; one the announce tool refuses is a 400 with its reason.
func TestRemindersServer(t *testing.T) {
	s := startSim(t, "")
	base := "http://" + s.url
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "set_reminder", Arguments: map[string]any{
		"text": "take my pills", "every": map[string]string{"repeat": "weekly", "weekday": "monday", "time": "08:00"}, "mac": testMAC, "user_id": "u1"}})
	if err != nil || res.IsError {
		t.Fatalf("set_reminder over MCP: %v %+v", err, res)
	}

	resp, body := do(t, "GET", base+"/web/reminders", "", nil)
	var list struct {
		Devices []struct {
			MAC       string
			Reminders []struct{ ID, Text, Due, When, Every string }
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != 200 || len(list.Devices) != 1 || len(list.Devices[0].Reminders) != 1 {
		t.Fatalf("GET /web/reminders: %s %q (%v), want the device's one reminder", resp.Status, body, err)
	}
	r := list.Devices[0].Reminders[0]
	due, err := time.Parse(time.RFC3339, r.Due)
	if r.Text != "take my pills" || r.Every != "every Monday at 08:00" || err != nil || due.Weekday() != time.Monday || !strings.HasPrefix(r.When, "Mon ") || !strings.HasSuffix(r.When, " 08:00") {
		t.Errorf("the reminder reads %+v (%v)", r, err)
	}

	same := map[string]string{"Origin": base, "Content-Type": "application/json"}
	if resp, body := do(t, "POST", base+"/web/reminders/"+r.ID+"/cancel", "", map[string]string{"Origin": base}); resp.StatusCode != 200 || !strings.Contains(body, `"canceled":true`) {
		t.Errorf("canceling from the page: %s %q", resp.Status, body)
	}
	if _, body := do(t, "GET", base+"/reminders?mac="+testMAC, "", nil); strings.TrimSpace(body) != "[]" {
		t.Errorf("GET /reminders after the page canceled: %q, want []", body)
	}

	if resp, body := do(t, "POST", base+"/web/announce", `{"text":"Dinner is ready"}`, same); resp.StatusCode != 200 || !strings.Contains(body, `"said":["`+testMAC+`"]`) {
		t.Errorf("announcing from the page: %s %q", resp.Status, body)
	}
	deadline := time.After(stepTimeout)
	for said := false; !said; {
		select {
		case f := <-s.finals:
			said = f == "Dinner is ready"
		case <-deadline:
			t.Fatal("the device was not given the announcement as a final")
		}
	}
	long := `{"text":"` + strings.Repeat("x", 600) + `"}`
	if resp, body := do(t, "POST", base+"/web/announce", long, same); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "text") {
		t.Errorf("announcing 600 characters: %s %q, want 400 saying the text is too long", resp.Status, body)
	}
}
