package store

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenSQLiteCreatesWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "agent.db") // the directory too
	db, err := OpenSQLite(t.Context(), path)
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
	// NORMAL (1) on the readers and the writer: what docs/storage.md says a power cut can lose.
	for name, pool := range map[string]*sql.DB{"reader": db.DB, "writer": db.write} {
		var mode int
		if err := pool.QueryRow("PRAGMA synchronous").Scan(&mode); err != nil || mode != 1 {
			t.Errorf("%s: synchronous %d, %v; want 1 (NORMAL)", name, mode, err)
		}
	}
	if n := db.write.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("the writer may open %d connections; want 1", n)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".devicectl-probe-*")); len(leftovers) > 0 {
		t.Errorf("the writability probe was left behind: %v", leftovers)
	}
}

func TestOpenSQLiteCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	garbage := []byte(strings.Repeat("this is not a database, it is garbage\x00\xff\x13", 200))
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := OpenSQLite(t.Context(), path)
	if err == nil {
		db.Close()
		t.Fatal("OpenSQLite of a garbage file succeeded")
	}
	want := "store: database " + path + " is not a SQLite database, or corrupt (file is not a database (26)); " +
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
		t.Error("OpenSQLite changed the corrupt file")
	}
}

// TestOpenSQLiteDamagedPages damages a real database past its header, which
// opens fine and fails only the structure check.
func TestOpenSQLiteDamagedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write(t.Context(), `CREATE TABLE t (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := db.Write(t.Context(), `INSERT INTO t (x) VALUES (?)`, strings.Repeat("用户喜欢科技相关话题 ", 10)+string(rune('a'+i%26))); err != nil {
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
	db, err = OpenSQLite(t.Context(), path)
	if err == nil {
		db.Close()
		t.Fatal("OpenSQLite of a damaged database succeeded")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("err = %v; want ErrCorrupt", err)
	}
	if !strings.HasPrefix(err.Error(), "store: database "+path+" is not a SQLite database, or corrupt (") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenSQLiteReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	path := filepath.Join(dir, "agent.db")
	db, err := OpenSQLite(t.Context(), path)
	if err == nil {
		db.Close()
		t.Fatal("OpenSQLite in a read-only directory succeeded")
	}
	want := "store: database " + path + " is read-only (directory " + dir + " is not writable); " +
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

func TestOpenSQLiteReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	db, err = OpenSQLite(t.Context(), path)
	if err == nil {
		db.Close()
		t.Fatal("OpenSQLite of a read-only file succeeded")
	}
	want := "store: database " + path + " is read-only (the file is not writable); " +
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
	db, err := OpenSQLite(t.Context(), path)
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
	if want := "store: database " + path + " is read-only (attempt to write a readonly database"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error:\n got %s\nwant prefix %s", err, want)
	}
}

func TestOpenSQLiteRefusesQuestionMark(t *testing.T) {
	_, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "a?b.db"))
	if err == nil || !strings.Contains(err.Error(), "contains '?'") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenSQLiteDirectoryAsFile(t *testing.T) {
	path := t.TempDir()
	_, err := OpenSQLite(t.Context(), path)
	want := "store: database " + path + " is unusable (not a regular file); point the state directory at a directory holding only devicectl's files"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

// The database holds memories and tasks: it and the files SQLite keeps beside it are the owner's
// alone, whatever the umask, and a file an older version left 0644 is made private.
func TestOpenSQLiteFilesPrivate(t *testing.T) {
	dir := t.TempDir()
	check := func(path string) {
		t.Helper()
		db, err := OpenSQLite(t.Context(), path)
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

// Writers of two processes (two DBs on one file) whose transactions read before they write never
// fail: the writer's transactions take the write lock at BEGIN, so one waits for the other in the
// busy handler. A deferred transaction would fail here with SQLITE_BUSY when its read snapshot
// is older than the other's commit.
func TestSQLiteWritersTakeTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	var dbs []*DB
	for range 2 {
		db, err := OpenSQLite(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	if _, err := dbs[0].Write(t.Context(), `CREATE TABLE n (i INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	const each = 50
	// t.Error may be called from any goroutine; wg.Wait keeps them inside the test.
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Go(func() {
			for range each {
				err := func() error {
					tx, err := db.BeginWrite(t.Context())
					if err != nil {
						return err
					}
					defer tx.Rollback()
					var next int
					if err := tx.QueryRow(`SELECT coalesce(max(i), 0) + 1 FROM n`).Scan(&next); err != nil {
						return err
					}
					if _, err := tx.Exec(`INSERT INTO n (i) VALUES (?)`, next); err != nil {
						return err
					}
					return tx.Commit()
				}()
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var n int
	if err := dbs[1].QueryRow(`SELECT count(*) FROM n`).Scan(&n); err != nil || n != 2*each {
		t.Errorf("%d rows, %v; want %d", n, err, 2*each)
	}
}

// Connections that concurrent reads opened stay open for the next ones, up to idleConns: a
// connection opened anew reads and parses the schema again.
func TestOpenSQLiteKeepsReadConnections(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const reads = 8
	var conns []*sql.Conn
	for range reads {
		c, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	if st := db.Stats(); st.Idle < reads || st.MaxIdleClosed > 0 {
		t.Errorf("after %d reads at once: %d connections idle, %d closed for want of room; want all %d kept", reads, st.Idle, st.MaxIdleClosed, reads)
	}
}
