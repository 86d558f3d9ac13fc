package procgroup

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/proc"
)

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
	proc.WaitGone(t, "the background child, past the program", child)
	if took > 2*time.Second {
		t.Errorf("Run took %v: it waited for the child to let go of the output", took)
	}
}
