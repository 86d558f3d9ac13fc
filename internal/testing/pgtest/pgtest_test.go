package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(Main(m, leakcheck.Main)) }

// Each DSN is a schema of its own: a table made in one is not in another, and the schema is
// gone once its test has ended.
func TestDSNIsolated(t *testing.T) {
	var first string
	t.Run("first", func(t *testing.T) {
		first = DSN(t)
		mustExec(t, first, `CREATE TABLE mine (x INTEGER)`)
		mustExec(t, first, `INSERT INTO mine VALUES (1)`)
		other := DSN(t)
		if err := tryExec(other, `INSERT INTO mine VALUES (2)`); err == nil {
			t.Error("a second schema sees the first one's table")
		}
	})
	if err := tryExec(first, `CREATE TABLE again (x INTEGER)`); err == nil {
		t.Error("the schema outlived its test")
	}
}

func mustExec(t *testing.T, dsn, stmt string) {
	t.Helper()
	if err := tryExec(dsn, stmt); err != nil {
		t.Fatal(err)
	}
}

// tryExec runs stmt in the schema the DSN's search_path names; with it gone, CREATE TABLE fails
// (no schema to create in).
func tryExec(dsn, stmt string) error {
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), stmt)
	return err
}

// The server programs are found on PATH, else in the newest of Debian's versioned directories
// that holds both; with neither, the error that turns into a skip (or, in CI, a failure).
func TestFindBinDir(t *testing.T) {
	root := t.TempDir()
	mk := func(version string, programs ...string) string {
		dir := filepath.Join(root, version, "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range programs {
			if err := os.WriteFile(filepath.Join(dir, p), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	glob := filepath.Join(root, "*", "bin")
	if _, err := findBinDir(notOnPath, glob); !errors.Is(err, errNoBinaries) {
		t.Errorf("nothing installed: %v; want errNoBinaries", err)
	}
	mk("9", "postgres", "initdb")
	want := mk("15", "postgres", "initdb")
	mk("16", "postgres") // no initdb: not a usable directory
	if got, err := findBinDir(notOnPath, glob); err != nil || got != want {
		t.Errorf("Debian's directories: %q, %v; want %s", got, err, want)
	}
	onPath := mk("path", "postgres", "initdb")
	if got, err := findBinDir(func(string) (string, error) { return filepath.Join(onPath, "postgres"), nil }, glob); err != nil || got != onPath {
		t.Errorf("on PATH: %q, %v; want %s", got, err, onPath)
	}
}
