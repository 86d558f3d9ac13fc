package speech_test

import (
	"fmt"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/speech"
)

// printVoice stands in for a *speech.Speaker.
type printVoice struct{}

func (printVoice) Speak(text string) { fmt.Println("say:", text) }
func (printVoice) Interrupt()        { fmt.Println("(interrupt)") }

func ExampleNarrator() {
	n := speech.NewNarrator(printVoice{}, &speech.Options{Sentences: true})
	for _, m := range []protocol.AIMessage{
		{Type: protocol.MessageThought, Content: "The user wants the weather."},
		{Type: protocol.MessageChunk, Content: "It is sunny. Tomor"},
		{Type: protocol.MessageChunk, Content: "row: rain！带伞"},
		{Type: protocol.MessageFinal, Content: "It is sunny. Tomorrow: rain！带伞"},
	} {
		n.Observe(m)
	}
	// Output:
	// (interrupt)
	// say: It is sunny.
	// say: Tomorrow: rain！
	// say: 带伞
}

func ExampleNewSpeaker() {
	s, err := speech.NewSpeaker(&speech.Options{
		// One process per utterance, text on stdin; a pipeline would need a wrapper script.
		Command: []string{"espeak-ng", "-v", "en", "-s", "160"},
	})
	if err != nil {
		fmt.Println(err) // e.g. espeak-ng is not installed
		return
	}
	defer s.Close()
	n := speech.NewNarrator(s, nil)
	n.Observe(protocol.AIMessage{Type: protocol.MessageFinal, Content: "Hello."})
}
