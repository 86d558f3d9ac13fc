//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"bufio"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/web"
)

// A turn a device started by voice shows on the page with what was heard, then its reply.
func TestDeviceTurnShown(t *testing.T) {
	srv, w := newHandlerWith(t, &web.Options{Agent: replyTurner{}})
	resp, err := http.Get(srv.URL + "/web/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := sseEvents(bufio.NewReader(resp.Body))
	if e, ok := events(); !ok || e[0] != "snapshot" {
		t.Fatalf("first event %q", e)
	}
	show := w.DeviceTurn("AA-BB-CC-DD-EE-01", "set the volume to thirty", "voice")
	show(agent.Event{Kind: agent.EventChunk, Text: "Volume set to 30."})
	show(agent.Event{Kind: agent.EventFinal, Text: "Volume set to 30."})
	other := w.DeviceTurn("AA-BB-CC-DD-EE-01", "smile", "voice")
	other(agent.Event{Kind: agent.EventError, Err: errors.New("the device disconnected")})

	var got []string
	for len(got) < 5 {
		e, ok := events()
		if !ok {
			t.Fatalf("the stream ended after %q", got)
		}
		got = append(got, e[0]+" "+e[1])
	}
	for i, want := range []string{
		`turn {"id":1,"mac":"AA-BB-CC-DD-EE-01","text":"set the volume to thirty","source":"voice"`,
		`chunk {"id":1,"text":"Volume set to 30."}`,
		`end {"id":1,"mac":"AA-BB-CC-DD-EE-01","text":"set the volume to thirty","source":"voice","reply":"Volume set to 30.","done":true}`,
		`turn {"id":2,"mac":"AA-BB-CC-DD-EE-01","text":"smile","source":"voice"`,
		`end {"id":2,"mac":"AA-BB-CC-DD-EE-01","text":"smile","source":"voice","reply":"","error":"the device disconnected","done":true}`,
	} {
		if !strings.HasPrefix(got[i], want) {
			t.Errorf("event %d: %s\nwant %s", i, got[i], want)
		}
	}
}
