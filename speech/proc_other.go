//go:build !unix

package speech

import "os/exec"

// killGroup leaves exec's default, killing the process alone: there are no process groups here.
func killGroup(*exec.Cmd) {}
