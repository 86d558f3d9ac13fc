//go:build !unix

package procgroup

import "os/exec"

// KillGroup leaves exec's default, killing the process alone: there are no process groups here.
func KillGroup(*exec.Cmd) {}

// Run is cmd.Run: there are no process groups here.
func Run(cmd *exec.Cmd) error { return cmd.Run() }
