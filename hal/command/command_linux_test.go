package command_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/command"
	"github.com/devicectl/devicectl/internal/testing/proc"
)

// A timeout stops what the program started as well: an animation it forked must not keep
// drawing over the next expression.
func TestTimeoutKillsTheProgramsChildren(t *testing.T) {
	ctx := context.Background()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	prog := script(t, "[ \"$1\" = idle ] && exit 0\nsleep 30 &\necho $! > "+pidFile+"\nwait\n")
	f, err := command.New(ctx, []string{prog}, &command.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetExpression(ctx, hal.Cry); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SetExpression = %v, want a timeout", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	proc.WaitGone(t, "the program's child, past the timeout", pid)
}
