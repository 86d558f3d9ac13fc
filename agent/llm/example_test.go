package llm_test

import (
	"log"
	"os"
	"strings"
	"time"

	"github.com/devicectl/devicectl/agent/llm"
)

// A planner for a local Ollama; a cloud endpoint takes its key from a file, as llm.api_key_file
// does. The planner is then given to the agent as its agent.Options.Planner.
func ExampleNew() {
	var key string
	if b, err := os.ReadFile("/etc/devicectl/llm.key"); err == nil {
		key = strings.TrimSpace(string(b))
	}
	p, err := llm.New(&llm.Options{
		BaseURL: "http://127.0.0.1:11434/v1",
		Model:   "qwen2.5:3b",
		APIKey:  key, // "" sends no Authorization header
		Timeout: time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = p
}
