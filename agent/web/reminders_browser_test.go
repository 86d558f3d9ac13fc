//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jsReminders are the reminders the device's card lists: [{id, what, when}].
const jsReminders = `[...(` + jsCard + `?.querySelectorAll(".reminders li[data-id]") ?? [])].map(li => ({
	id: li.dataset.id, what: li.querySelector(".what").textContent, when: li.querySelector(".when").textContent}))`

type listedReminder struct{ ID, What, When string }

// The page lists each device's reminders, those set by talking on the page at once and those
// set elsewhere (here by an MCP host) within the page's polling interval; its Cancel button
// cancels one in the store; its Announce button has the device say the text, with no turn.
func TestPageReminders(t *testing.T) {
	// The server first: cleanups run last first, so the tab closes before the server does and
	// the page never sees its stream refused.
	s := startSim(t, "")
	ctx := browser(t)
	page := "http://" + s.url + "/"
	step(t, ctx, "loading "+page, chromedp.EmulateViewport(viewW, viewH, chromedp.EmulateScale(1)), chromedp.Navigate(page))
	waitFor(t, ctx, "the device says it has no reminders",
		`document.body.dataset.ready === "true" && `+jsCard+`?.querySelector(".reminders .none")?.checkVisibility() &&
		!document.getElementById("announce").hidden`)

	// Set by voice (the rule planner's set_reminder), on the page: listed once the turn's
	// call is logged.
	step(t, ctx, "focusing the conversation box", chromedp.Focus("#say-text"))
	step(t, ctx, "asking for a reminder", chromedp.KeyEvent("remind me in 5 minutes to stretch\r"))
	waitFor(t, ctx, "the reminder is listed", jsReminders+`.some(r => r.what === "stretch" && r.when.endsWith(" · once"))`)

	// Set by an MCP host: no event tells the page, its next read shows it.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: page + "mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "set_reminder", Arguments: map[string]any{
		"text": "take my pills", "every": map[string]string{"repeat": "daily", "time": "08:00"}, "mac": testMAC, "user_id": "u1"}})
	if err != nil || res.IsError {
		t.Fatalf("set_reminder over MCP: %v %+v", err, res)
	}
	waitFor(t, ctx, "the daily reminder is listed", jsReminders+`.some(r => r.what === "take my pills" && r.when.endsWith(" · every day at 08:00"))`)
	if shot := os.Getenv("DEVICECTL_WEB_SHOT"); shot != "" { // for a person to look at
		b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil || os.WriteFile(shot, b, 0o644) != nil {
			t.Errorf("the screenshot for DEVICECTL_WEB_SHOT: %v", err)
		}
	}

	// Cancel the first from the page: it leaves the page and the store.
	var stretch string
	for _, r := range eval[[]listedReminder](t, ctx, jsReminders) {
		if r.What == "stretch" {
			stretch = r.ID
		}
	}
	label := eval[string](t, ctx, jsCard+`.querySelector('.reminders li[data-id="`+stretch+`"] button').getAttribute("aria-label")`)
	if !strings.HasPrefix(label, "Cancel the reminder stretch at ") {
		t.Errorf("the cancel button's label is %q", label)
	}
	step(t, ctx, "clicking Cancel", chromedp.Click(`li.device .reminders li[data-id="`+stretch+`"] button.cancel`))
	waitFor(t, ctx, "the canceled reminder is gone", `!`+jsReminders+`.some(r => r.what === "stretch") && `+jsReminders+`.length === 1`)
	resp, err := http.Get(page + "reminders?mac=" + testMAC)
	if err != nil {
		t.Fatal(err)
	}
	var stored []struct{ ID, Text string }
	err = json.NewDecoder(resp.Body).Decode(&stored)
	resp.Body.Close()
	if err != nil || len(stored) != 1 || stored[0].Text != "take my pills" {
		t.Errorf("GET /reminders after the cancel: %+v, %v; want only take my pills", stored, err)
	}

	// Announce: the device says the text as it is; the conversation has no new turn.
	turns := eval[int](t, ctx, `document.querySelectorAll("#transcript li.you").length`)
	step(t, ctx, "typing what to announce", chromedp.Focus("#say-text"), chromedp.KeyEvent("Dinner is ready"))
	step(t, ctx, "clicking Announce", chromedp.Click("#announce"))
	waitFor(t, ctx, "the page says it was said", `document.getElementById("say-status").textContent === "Said on `+testMAC+`."`)
	deadline := time.After(stepTimeout)
	for said := false; !said; {
		select {
		case f := <-s.finals:
			said = f == "Dinner is ready"
		case <-deadline:
			t.Fatal("the device was not given the announcement as a final")
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#transcript li.you").length`); n != turns {
		t.Errorf("the announcement started a turn: %d turns, were %d", n, turns)
	}
}
