package peer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// TestMain fails the package if a test leaves goroutines behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// recorder is a testing.TB that records how a check ended instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = format; panic(r) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = strings.Join(append([]string{format}, strs(args)...), " ")
	panic(r)
}
func (r *recorder) Fatal(args ...any) { r.failed = strings.Join(strs(args), " "); panic(r) }
func (r *recorder) Helper()           {}

func strs(args []any) []string {
	var s []string
	for _, a := range args {
		if v, ok := a.(string); ok {
			s = append(s, v)
		}
	}
	return s
}

// run runs check against a recorder and returns it once check ended it, or returned.
func run(t *testing.T, check func(testing.TB)) (r *recorder) {
	r = &recorder{TB: t}
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
	}()
	check(r)
	return r
}

var p = Peer{Env: "DEVICECTL_PEER_TEST", What: "the test's peer", Script: "scripts/none.sh"}

// Without its variable the peer is skipped; with it, what is missing fails, naming the script,
// and what is there passes.
func TestPeer(t *testing.T) {
	t.Setenv(p.Env, "")
	if r := run(t, p.Need); r.skipped == "" {
		t.Error("Need without the variable did not skip")
	}
	t.Setenv(p.Env, "1")
	if r := run(t, p.Need); r.skipped != "" || r.failed != "" {
		t.Errorf("Need with the variable: skipped %q, failed %q", r.skipped, r.failed)
	}
	if r := run(t, func(tb testing.TB) { p.Program(tb, "no-such-program-here") }); r.failed == "" {
		t.Error("a missing program passed")
	}
	if r := run(t, func(tb testing.TB) { p.File(tb, "no/such/file") }); !strings.Contains(r.failed, "(run %s)") {
		t.Errorf("a missing file: %q, want a failure naming the script", r.failed)
	}
	if path := p.File(t, "go.mod"); filepath.Base(path) != "go.mod" || !filepath.IsAbs(path) {
		t.Errorf("File(go.mod) = %s", path)
	}
}

// Version passes the version a package.json holds and fails any other.
func TestVersion(t *testing.T) {
	rel := filepath.Join(t.TempDir(), "package.json")
	if err := os.WriteFile(rel, []byte(`{"name":"x","version":"1.2.3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, func(tb testing.TB) { p.Version(tb, rel, "1.2.3") }); r.failed != "" {
		t.Errorf("the version held: %q", r.failed)
	}
	if r := run(t, func(tb testing.TB) { p.Version(tb, rel, "1.2.4") }); r.failed == "" {
		t.Error("another version passed")
	}
}
