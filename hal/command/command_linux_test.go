package command_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/command"
)

// alive reports whether pid runs: a killed process whose parent is gone may linger as a zombie
// until something reaps it, and a zombie draws nothing.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

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
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the program's child %d outlived the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
