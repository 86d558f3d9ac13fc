//go:build !devicectl_omit_sim

package main

import (
	"context"
	"io"
	"regexp"
	"testing"
)

// The README's reminder tour, line by line, at sim's console: a reminder set, said two seconds
// later with no turn, listed, and canceled. The clock times differ from run to run.
func TestSimReminderTour(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	out := newLineWaiter(outR)
	done := make(chan int, 1)
	go func() {
		defer outW.Close()
		done <- execute(ctx, []string{"sim"}, inR, outW, io.Discard)
	}()
	clock := `\d\d:\d\d`
	for _, step := range []struct{ say, want string }{
		{"10分钟后提醒我喝水", `^好的，10分钟后（` + clock + `）提醒你喝水。$`},
		{"remind me in 2 seconds to stretch", `^OK, I'll remind you to stretch in 2 seconds \(` + clock + `\)\.$`},
		{"", `^Reminder: stretch$`},
		{"我有哪些提醒", `^你有1个提醒：今天` + clock + ` 喝水。$`},
		{"取消喝水的提醒", `^好的，已取消喝水的提醒。$`},
		{"what reminders do I have", `^You have no reminders\.$`},
	} {
		if step.say != "" {
			io.WriteString(inW, step.say+"\n")
		}
		re := regexp.MustCompile(step.want)
		for line := out.waitFor(t, ""); !re.MatchString(line); line = out.waitFor(t, "") {
			t.Logf("step %q: %q", step.say, line)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("sim exit %d", code)
	}
}
