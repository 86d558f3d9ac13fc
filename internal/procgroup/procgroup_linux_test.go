package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether pid has ended, a zombie counting as ended.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// Run kills what the program left in its group once it exits, keeps the program's own exit
// status, and does not wait on the child's hold of the output.
func TestRunKillsLeftovers(t *testing.T) {
	var out strings.Builder
	cmd := exec.Command("sh", "-c", `sleep 1000 & echo $!; exit 3`)
	cmd.Stdout = &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := Run(cmd)
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("Run = %v, want exit status 3", err)
	}
	child, aerr := strconv.Atoi(strings.TrimSpace(out.String()))
	if aerr != nil {
		t.Fatalf("child pid %q", out.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for !gone(child) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the background child %d outlived the program", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if took > 2*time.Second {
		t.Errorf("Run took %v: it waited for the child to let go of the output", took)
	}
}
