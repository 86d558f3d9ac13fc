package hooks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/devicectl/devicectl/hooks"
)

func ExampleNew() {
	dir, err := os.MkdirTemp("", "hooks-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	log := filepath.Join(dir, "events.log")

	// A shell only because the user asked for one; the log file is the script's $1.
	appendEvent := []string{"/bin/sh", "-c",
		`printf '%s\n' "$DEVICECTL_EVENT${DEVICECTL_TOOL:+ $DEVICECTL_TOOL}" >> "$1"`, "sh", log}
	r, err := hooks.New(&hooks.Options{
		Commands: map[hooks.Event][]string{
			hooks.Connected:    appendEvent,
			hooks.ToolExecuted: appendEvent,
		},
		Common: map[string]string{"SERVER": "wss://agent.example.com/ws"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r.Fire(hooks.Connected, nil)
	r.Fire(hooks.Registered, nil) // no hook: nothing runs
	if r.Has(hooks.ToolExecuted) {
		r.Fire(hooks.ToolExecuted, map[string]string{"TOOL": "amplify_volume"})
	}
	// Close lets the queued hooks finish.
	if err := r.Close(context.Background()); err != nil {
		fmt.Println(err)
	}

	b, err := os.ReadFile(log)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(b))
	// Output:
	// connected
	// tool_executed amplify_volume
}
