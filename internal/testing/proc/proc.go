//go:build unix

// Package proc tells a test which processes are still running, from /proc: tests that check a
// stop or a time-out took a program's children with it look at them this way, since nothing else
// tells a test that a process it did not start has ended. RSS reads a process's resident set, for
// the tests and benchmarks that measure one.
package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/poll"
)

// stat returns the fields of /proc/PID/stat after the command name, which is in parentheses and
// may hold spaces and parentheses itself: state, ppid, pgrp, ...; nil when there is no such
// process.
func stat(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// Alive reports whether the process pid runs: it exists and is not a zombie (or dead) waiting to
// be reaped.
func Alive(pid int) bool {
	f := stat("/proc/" + strconv.Itoa(pid) + "/stat")
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Group returns the running processes of process group pgid. A killed process whose parent is
// gone may linger as a zombie until something reaps it (in a container, maybe never); it does
// nothing, so it is not counted.
func Group(t testing.TB, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, path := range stats {
		f := stat(path) // gone already when it ended while we looked
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// WaitGone waits until the process pid, which what names for the failure, has ended, and kills
// it if it has not within poll.Wait.
func WaitGone(t testing.TB, what string, pid int) {
	t.Helper()
	gone := false
	t.Cleanup(func() {
		if !gone {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	poll.Until(t, "end of "+what+" (pid "+strconv.Itoa(pid)+")", func() bool { return !Alive(pid) })
	gone = true
}
