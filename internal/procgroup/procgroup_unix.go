//go:build unix

package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// KillGroup makes cancelling cmd (its context ending) kill cmd's whole process group. Set it
// before cmd starts.
func KillGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// Run starts cmd in a process group of its own, waits for it as cmd.Run does, and as soon as
// cmd's process has exited kills every process still in its group: children it left in the
// background die with it. A child that started a session or group of its own (setsid) is not
// touched. It returns cmd.Run's error. For a command made with exec.CommandContext, call
// KillGroup first, so that the context ending kills the group too.
func Run(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	// Waited for without reaping: until cmd.Wait reaps it, the leader's pid (the group's id)
	// is not reused, so the kill cannot reach another group.
	if waitExited(cmd.Process.Pid) == nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: the group had no one else
	}
	return cmd.Wait()
}
