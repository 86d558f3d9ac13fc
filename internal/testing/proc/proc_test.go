//go:build linux

package proc

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// A process in a group of its own is alive and in that group until it is killed; once killed
// it is gone, the zombie its parent has not reaped yet included.
func TestAliveAndGroup(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Errorf("Alive(%d) = false for a sleeping process", pid)
	}
	if g := Group(t, pid); !slices.Equal(g, []int{pid}) {
		t.Errorf("Group(%d) = %v, want the process alone", pid, g)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Wait for the exit without reaping it (waitid, WNOWAIT): the process is a zombie now.
	const pPID, wNoWait = 1, 0x01000000
	if _, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), 0, syscall.WEXITED|wNoWait, 0, 0); errno != 0 {
		t.Fatal(errno)
	}
	if Alive(pid) || len(Group(t, pid)) != 0 {
		t.Errorf("a killed process not yet reaped: Alive %v, Group %v; want it gone", Alive(pid), Group(t, pid))
	}
	cmd.Wait()
	if Alive(pid) {
		t.Errorf("Alive(%d) = true after the process was reaped", pid)
	}
}
