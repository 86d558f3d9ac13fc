//go:build unix

package speech

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killGroup makes cancelling cmd kill its whole process group. A wrapper script running
// "piper | aplay" would otherwise lose only the shell, and aplay would play on after an
// interrupt.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
