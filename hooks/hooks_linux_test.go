package hooks_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hooks"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/proc"
)

// waitGroupGone waits until nothing is left of process group pgid, nor of child, killing what is
// left if the wait fails. A SIGKILL takes a moment to land: the wait is for that, not for the
// processes' own sleeps.
func waitGroupGone(t *testing.T, what string, pgid, child int) {
	t.Helper()
	gone := false
	t.Cleanup(func() {
		if !gone {
			syscall.Kill(-pgid, syscall.SIGKILL)
			syscall.Kill(child, syscall.SIGKILL)
		}
	})
	poll.Until(t, fmt.Sprintf("end of process group %d and child %d: %s", pgid, child, what), func() bool {
		return len(proc.Group(t, pgid)) == 0 && !proc.Alive(child)
	})
	gone = true
}

// readPID reads the pid a hook wrote to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %s: %q", path, b)
	}
	return pid
}

// A timeout stops everything the hook started: a child it left in the background must not
// outlive it, nor keep its output open and so wedge the queue.
func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	var log logBuffer
	prog := script(t, `dir=$1
echo $$ > "$dir/pid"
set -- $(cat /proc/$$/stat)
echo $5 > "$dir/pgid"
sleep 30 &
echo $! > "$dir/child"
sleep 30
`)
	next := newHolder(t)
	r := newRunner(t, &hooks.Options{
		Commands: map[hooks.Event][]string{hooks.Connected: {prog, dir}, hooks.Registered: next.argv},
		Timeout:  300 * time.Millisecond,
		Logger:   log.logger(),
	})
	r.Fire(hooks.Connected, nil)
	r.Fire(hooks.Registered, map[string]string{"N": "next"})
	start := time.Now()
	closeRunner(t, r)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the runs took %v; the hook's child held the queue", took)
	}
	if d := diff(next.ran(t), []string{"next"}); d != "" {
		t.Errorf("the hook after the timed-out one: %s", d)
	}
	warns := log.records(t, "hook failed")
	if len(warns) != 1 || warns[0]["status"] != "timed out after 300ms" {
		t.Errorf("failures logged: %v, want a timeout after 300ms", warns)
	}
	pid := readPID(t, filepath.Join(dir, "pid"))
	pgid := readPID(t, filepath.Join(dir, "pgid"))
	child := readPID(t, filepath.Join(dir, "child"))
	if pgid != pid {
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("the hook %d ran in process group %d, not its own", pid, pgid)
	}
	waitGroupGone(t, "they outlived the timeout", pid, child)
}

// A hook that backgrounds a child and exits 0 takes the child with it: once the run is over
// (the next hook has run), nothing of its process group is left, and the run is a success that
// did not wait on the child's hold of its output.
func TestHookEndKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	var log logBuffer
	prog := script(t, `echo $$ > "$1/pid"
sleep 1000 &
echo $! > "$1/child"
exit 0
`)
	next := newHolder(t)
	r := newRunner(t, &hooks.Options{
		Commands: map[hooks.Event][]string{hooks.Connected: {prog, dir}, hooks.Registered: next.argv},
		Logger:   log.logger(),
	})
	r.Fire(hooks.Connected, nil)
	r.Fire(hooks.Registered, map[string]string{"N": "next"})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	err := r.Close(ctx)
	took := time.Since(start)
	pid := readPID(t, filepath.Join(dir, "pid"))
	child := readPID(t, filepath.Join(dir, "child"))
	waitGroupGone(t, "they outlived the hook", pid, child)
	if err != nil {
		t.Fatalf("Close = %v", err)
	}
	// Without the kill the run waits waitDelay (1s) for the child to let go of the output.
	if took > 900*time.Millisecond {
		t.Errorf("the runs took %v; the hook's child held the queue", took)
	}
	if d := diff(next.ran(t), []string{"next"}); d != "" {
		t.Errorf("the hook after: %s", d)
	}
	if w := log.records(t, "hook failed"); len(w) != 0 {
		t.Errorf("failures logged: %v", w)
	}
}

// A process the hook starts in a session of its own (setsid) is left alone, as the docs promise
// for a hook that means to leave something running; the run still ends.
func TestSetsidChildSurvives(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	dir := t.TempDir()
	prog := script(t, `setsid sh -c 'echo $$ > "$1/child"; exec sleep 1000' sh "$1" >/dev/null 2>&1 </dev/null &
while [ ! -s "$1/child" ]; do sleep 0.01; done
`)
	r := newRunner(t, &hooks.Options{Commands: map[hooks.Event][]string{hooks.Connected: {prog, dir}}})
	r.Fire(hooks.Connected, nil)
	closeRunner(t, r)
	child := readPID(t, filepath.Join(dir, "child"))
	defer syscall.Kill(child, syscall.SIGKILL)
	if !proc.Alive(child) {
		t.Errorf("the hook's setsid child %d was killed with the hook", child)
	}
}
