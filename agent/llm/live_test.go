package llm

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/devicectl/devicectl/agent"
)

// TestLive runs one turn against a real endpoint. It is skipped unless DEVICECTL_LLM_URL is set:
//
//	DEVICECTL_LLM_URL=http://127.0.0.1:11434/v1 DEVICECTL_LLM_MODEL=qwen2.5:3b \
//	    go test -run TestLive -v ./agent/llm/
//
// DEVICECTL_LLM_MODEL defaults to the first model the endpoint lists; DEVICECTL_LLM_KEY_FILE
// names a file holding the API key, for cloud endpoints.
func TestLive(t *testing.T) {
	base := os.Getenv("DEVICECTL_LLM_URL")
	if base == "" {
		t.Skip("set DEVICECTL_LLM_URL (e.g. http://127.0.0.1:11434/v1) to run one turn against a real endpoint")
	}
	var key string
	if f := os.Getenv("DEVICECTL_LLM_KEY_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		key = strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	model := os.Getenv("DEVICECTL_LLM_MODEL")
	if model == "" {
		model = firstModel(ctx, t, base, key)
	}
	t.Logf("endpoint %s, model %s", base, model)

	p := newPlanner(t, base, func(o *Options) { o.Model = model; o.APIKey = key; o.Timeout = 3 * time.Minute })
	turn := &fakeTurn{
		req:   agent.Request{Text: "Please set the volume to 30."},
		decls: deviceTools(t)[:1], // amplify_volume
	}
	if err := p.Plan(ctx, turn); err != nil {
		t.Fatal(err)
	}
	t.Logf("thought: %s", strings.Join(turn.texts(agent.EventThought), ""))
	t.Logf("reply: %s", strings.Join(turn.texts(agent.EventChunk), ""))
	t.Logf("calls: %q", turn.calls())

	var levels []int
	for _, e := range turn.snapshot() {
		if e.Kind != agent.EventToolCall || e.Tool != "amplify_volume" {
			continue
		}
		var in struct{ Level int }
		if err := json.Unmarshal(e.Input, &in); err != nil {
			t.Errorf("amplify_volume input %s: %v", e.Input, err)
		}
		levels = append(levels, in.Level)
	}
	if len(levels) == 0 || levels[len(levels)-1] != 30 {
		t.Errorf("amplify_volume levels = %v, want a call with 30", levels)
	}
	if len(turn.texts(agent.EventChunk)) == 0 {
		t.Errorf("no reply was streamed")
	}
}

// firstModel is the first model the endpoint lists (GET /models).
func firstModel(ctx context.Context, t *testing.T, base, key string) string {
	t.Helper()
	opts := []option.RequestOption{option.WithBaseURL(base), option.WithMaxRetries(0)}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	svc := openai.NewModelService(opts...)
	page, err := svc.List(ctx)
	if err != nil {
		t.Fatalf("listing the models of %s (set DEVICECTL_LLM_MODEL to skip this): %v", base, err)
	}
	if len(page.Data) == 0 {
		t.Fatalf("%s lists no models; set DEVICECTL_LLM_MODEL", base)
	}
	return page.Data[0].ID
}
