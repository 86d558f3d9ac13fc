//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/devicectl/devicectl/agent/hub/hubtest"
)

// What a device heard shows in the page's conversation, with the reply under it.
func TestPageHeard(t *testing.T) {
	// The server first: cleanups run last first, so the tab closes before the server does and
	// the page never sees its stream refused.
	s := startSim(t, "")
	ctx := browser(t)
	step(t, ctx, "loading the page", chromedp.Navigate("http://"+s.url+"/"))
	waitFor(t, ctx, "the page is ready", `document.body.dataset.ready === "true"`)

	const mac = "02-00-00-00-00-61"
	d, err := hubtest.Dial(t.Context(), "ws://"+s.url+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Register(t.Context(), mac, hubtest.Tools); err != nil {
		t.Fatal(err)
	}
	m, err := d.Request(t.Context(), "mcp/user/text", map[string]string{"text": "what can you do", "lang": "en", "source": "voice"})
	if err != nil || m.Error != nil {
		t.Fatalf("mcp/user/text: %v %+v", err, m)
	}
	waitFor(t, ctx, "the heard line and its reply", `[...document.querySelectorAll("#transcript li.you")].some(li =>
		li.textContent === "`+mac+` heard: what can you do" &&
		li.nextElementSibling.matches("li.reply:not(.pending)") &&
		li.nextElementSibling.querySelector(".text").textContent.length > 0)`)
}
