package turn_test

import (
	"fmt"
	"os"

	"github.com/devicectl/devicectl/device/turn"
	"github.com/devicectl/devicectl/protocol"
)

// A renderer writes the text of each step and a newline at the end of a turn; a hook takes the
// whole reply at the end.
func Example() {
	a := turn.Assembler{Gather: 1 << 20}
	for _, m := range []protocol.AIMessage{
		{Type: protocol.MessageChunk, Content: "It is "},
		{Type: protocol.MessageThought, Content: "check the clock"},
		{Type: protocol.MessageChunk, Content: "noon."},
		{Type: protocol.MessageFinal, Content: "It is noon."}, // already shown as chunks: not repeated
		{Type: protocol.MessageFinal, Content: "Bye."},        // a turn sent whole
	} {
		s := a.Add(m.Type, m.Content)
		os.Stdout.WriteString(s.Text)
		if s.End {
			fmt.Printf("\n  reply %q, streamed %v\n", s.Reply, s.Streamed)
		}
	}
	// Output:
	// It is noon.
	//   reply "It is noon.", streamed true
	// Bye.
	//   reply "Bye.", streamed false
}
