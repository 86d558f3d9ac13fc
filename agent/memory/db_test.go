package memory

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenDBCreatesWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "agent.db") // the directory too
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var fk, busy int
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA busy_timeout").Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || fk != 1 || busy != busyTimeoutMS {
		t.Errorf("journal_mode %q, foreign_keys %d, busy_timeout %d; want wal, 1, %d", mode, fk, busy, busyTimeoutMS)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".devicectl-probe-*")); len(leftovers) > 0 {
		t.Errorf("the writability probe was left behind: %v", leftovers)
	}
}

func TestOpenDBCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	garbage := []byte(strings.Repeat("this is not a database, it is garbage\x00\xff\x13", 200))
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := OpenDB(path)
	if err == nil {
		db.Close()
		t.Fatal("OpenDB of a garbage file succeeded")
	}
	want := "memory: database " + path + " is not a SQLite database, or corrupt (file is not a database (26)); " +
		"move it and any -wal and -shm files next to it aside (mv " + path + " " + path + ".broken) " +
		"so that an empty one is created, or restore it from a backup"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrReadOnly) {
		t.Errorf("errors.Is(err, ErrCorrupt) = %v, ErrReadOnly = %v; want true, false", errors.Is(err, ErrCorrupt), errors.Is(err, ErrReadOnly))
	}
	// Nothing was "repaired": the file is as it was.
	if got, _ := os.ReadFile(path); string(got) != string(garbage) {
		t.Error("OpenDB changed the corrupt file")
	}
}

// TestOpenDBDamagedPages damages a real database past its header, which
// opens fine and fails only the structure check.
func TestOpenDBDamagedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := s.Add(t.Context(), "u", strings.Repeat("用户喜欢科技相关话题 ", 10)+string(rune('a'+i%26)), []string{"科技"}); err != nil {
			t.Fatal(err)
		}
	}
	// Fold the WAL into the file, so the damage below is what SQLite reads.
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8*4096 {
		t.Fatalf("database is only %d bytes", len(data))
	}
	// Keep page 1 (the header and schema); scribble over the b-tree pages.
	for i := 4096; i < len(data); i++ {
		data[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err = OpenDB(path)
	if err == nil {
		db.Close()
		t.Fatal("OpenDB of a damaged database succeeded")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("err = %v; want ErrCorrupt", err)
	}
	if !strings.HasPrefix(err.Error(), "memory: database "+path+" is not a SQLite database, or corrupt (") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenDBReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	path := filepath.Join(dir, "agent.db")
	db, err := OpenDB(path)
	if err == nil {
		db.Close()
		t.Fatal("OpenDB in a read-only directory succeeded")
	}
	want := "memory: database " + path + " is read-only (directory " + dir + " is not writable); " +
		"make the file and its directory writable by the user devicectl runs as, or choose another state directory"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("errors.Is(err, ErrReadOnly) = false")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a database file was created: %v", err)
	}
}

func TestOpenDBReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	db, err = OpenDB(path)
	if err == nil {
		db.Close()
		t.Fatal("OpenDB of a read-only file succeeded")
	}
	want := "memory: database " + path + " is read-only (the file is not writable); " +
		"make the file and its directory writable by the user devicectl runs as, or choose another state directory"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("errors.Is(err, ErrReadOnly) = false")
	}
}

// TestClassifyReadOnly checks what SQLite itself reports on a database it
// cannot write (a read-only mount, which a test cannot make): the write probe
// of checkDB fails and classify names it read-only.
func TestClassifyReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	err = checkDB(t.Context(), ro)
	if err == nil {
		t.Fatal("checkDB on a read-only connection succeeded")
	}
	err = classify(path, err)
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("classify: %v; want ErrReadOnly", err)
	}
	if want := "memory: database " + path + " is read-only (attempt to write a readonly database"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error:\n got %s\nwant prefix %s", err, want)
	}
}

func TestOpenDBRefusesQuestionMark(t *testing.T) {
	_, err := OpenDB(filepath.Join(t.TempDir(), "a?b.db"))
	if err == nil || !strings.Contains(err.Error(), "contains '?'") {
		t.Errorf("err = %v", err)
	}
}

func TestMigrate(t *testing.T) {
	db, err := OpenDB(filepath.Join(t.TempDir(), "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	steps := []string{
		`CREATE TABLE a_one (x INTEGER)`,
		`ALTER TABLE a_one ADD COLUMN y TEXT; CREATE TABLE a_two (z INTEGER)`,
	}
	if err := Migrate(ctx, db, "a", steps[:1]); err != nil {
		t.Fatal(err)
	}
	// Another component shares the table of versions, not the version.
	if err := Migrate(ctx, db, "b", []string{`CREATE TABLE b_one (x INTEGER)`}); err != nil {
		t.Fatal(err)
	}
	// Growing: only the new step runs (a second CREATE TABLE a_one would fail).
	if err := Migrate(ctx, db, "a", steps); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, db, "a", steps); err != nil {
		t.Fatalf("again: %v", err)
	}
	if _, err := db.Exec(`INSERT INTO a_one (x, y) VALUES (1, 'y'); INSERT INTO a_two (z) VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	versions := map[string]int{}
	rows, err := db.Query(`SELECT component, version FROM schema_migrations`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			t.Fatal(err)
		}
		versions[c] = v
	}
	rows.Close()
	if versions["a"] != 2 || versions["b"] != 1 {
		t.Errorf("versions %v; want a:2 b:1", versions)
	}
	// An older devicectl meets the newer schema.
	err = Migrate(ctx, db, "a", steps[:1])
	if err == nil || !strings.Contains(err.Error(), "schema version 2, newer than this devicectl knows (1)") {
		t.Errorf("older steps: %v", err)
	}
	// A failing step leaves the version where it was.
	if err := Migrate(ctx, db, "b", []string{`CREATE TABLE b_one (x INTEGER)`, `CREATE TABLE nonsense (`}); err == nil {
		t.Error("a bad step succeeded")
	}
	var v int
	if err := db.QueryRow(`SELECT version FROM schema_migrations WHERE component = 'b'`).Scan(&v); err != nil || v != 1 {
		t.Errorf("b after a failed step: version %d, %v; want 1", v, err)
	}
}

func TestOpenDBDirectoryAsFile(t *testing.T) {
	path := t.TempDir()
	_, err := OpenDB(path)
	want := "memory: database " + path + " is unusable (not a regular file); point the state directory at a directory holding only devicectl's files"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

// The database holds memories and tasks: it and the files SQLite keeps beside it are the owner's
// alone, whatever the umask, and a file an older version left 0644 is made private.
func TestOpenDBFilesPrivate(t *testing.T) {
	dir := t.TempDir()
	check := func(path string) {
		t.Helper()
		db, err := OpenDB(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s is %v, want -rw-------", filepath.Base(p), st.Mode().Perm())
			}
		}
	}
	check(filepath.Join(dir, "agent.db"))

	old := filepath.Join(dir, "old.db")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o644); err != nil { // past the umask
		t.Fatal(err)
	}
	check(old)
}
