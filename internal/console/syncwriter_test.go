package console

import (
	"bytes"
	"testing"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/protocol"
)

// A reply of two sentences that the panel breaks in two goes on at the start of its new line,
// without the space that joined the sentences.
func TestReplyAfterPanelStartsItsLine(t *testing.T) {
	var buf bytes.Buffer
	out := NewSyncWriter(&buf)
	panel := NewPanel(out, 30, hal.Smile)
	r := device.NewRenderer(out, nil, nil)
	r.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: "OK, the volume went from 30 to 40."})
	panel.SetVolume(40)
	r.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: " OK, now showing a smile."})
	r.Render(protocol.AIMessage{Type: protocol.MessageChunk, Content: " Bye."})
	r.Render(protocol.AIMessage{Type: protocol.MessageFinal})
	want := "OK, the volume went from 30 to 40.\n    volume ████████░░░░░░░░░░░░  40%   face smile\nOK, now showing a smile. Bye.\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
