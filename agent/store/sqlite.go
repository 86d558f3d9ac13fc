package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// busyTimeoutMS is how long a statement waits for another connection's write
// lock before it fails with SQLITE_BUSY. Writes are short; a few seconds only
// runs out when something is badly wrong.
const busyTimeoutMS = 5000

// idleConns is how many connections the pool keeps open between reads.
const idleConns = 16

// The kinds of OpenError, for errors.Is.
var (
	// ErrReadOnly is a database file or directory the process cannot write.
	ErrReadOnly = errors.New("read-only")
	// ErrCorrupt is a file that is not a SQLite database, or one that
	// fails its integrity check.
	ErrCorrupt = errors.New("not a SQLite database, or corrupt")
)

// OpenError is a SQLite file OpenSQLite refused, with what is wrong and what to do.
type OpenError struct {
	Path   string // the database file
	Kind   error  // ErrReadOnly, ErrCorrupt, or nil for any other failure
	Detail string // what exactly failed
	Fix    string // what the operator should do
	Err    error  // the underlying error, if any
}

func (e *OpenError) Error() string {
	kind := "unusable"
	if e.Kind != nil {
		kind = e.Kind.Error()
	}
	return fmt.Sprintf("store: database %s is %s (%s); %s", e.Path, kind, e.Detail, e.Fix)
}

// Unwrap lets errors.Is find both the kind and the underlying error.
func (e *OpenError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func readOnlyError(path, detail string, err error) *OpenError {
	return &OpenError{Path: path, Kind: ErrReadOnly, Detail: detail, Err: err,
		Fix: "make the file and its directory writable by the user devicectl runs as, or choose another state directory"}
}

func corruptError(path, detail string, err error) *OpenError {
	return &OpenError{Path: path, Kind: ErrCorrupt, Detail: detail, Err: err,
		Fix: fmt.Sprintf("move it and any -wal and -shm files next to it aside (mv %s %s.broken) so that an empty one is created, or restore it from a backup", path, path)}
}

// OpenSQLite opens the agent's SQLite database at path, creating the file (and its directory)
// when missing. Every connection uses WAL journaling (readers do not block the writer),
// synchronous=NORMAL, a busy timeout and foreign keys; the writer's transactions begin
// IMMEDIATE. Before returning it checks that the file is a database (PRAGMA quick_check) and
// that it can be written, so that a corrupt or read-only file fails at start with an *OpenError
// naming the path and the fix, never later and never silently.
//
// A file or directory with no write permission bit at all is treated as read-only even when
// running as root, who could otherwise write it: the mode says the operator does not want it
// written.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: database path is empty")
	}
	if strings.ContainsRune(path, '?') {
		// The driver takes everything after '?' as connection parameters.
		return nil, fmt.Errorf("store: database path %q contains '?', which the SQLite driver cannot open", path)
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	dsn := path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)", busyTimeoutMS)
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: database %s: %w", path, err)
	}
	// Past its idle connections the pool closes what concurrent reads opened, and the next read
	// opens one anew: the file opened, the schema read and parsed, the statements prepared again,
	// more than the read itself. Concurrent turns and requests read at once: keep enough.
	read.SetMaxIdleConns(idleConns)
	write, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
	if err != nil {
		read.Close()
		return nil, fmt.Errorf("store: database %s: %w", path, err)
	}
	// One connection, kept: the writers of this process queue for it in database/sql.
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := checkDB(ctx, write); err != nil {
		read.Close()
		write.Close()
		return nil, classify(path, err)
	}
	return &DB{DB: read, write: write, dialect: SQLite, name: path, stmts: make(map[string]*sql.Stmt)}, nil
}

// checkWritable reports a read-only file or directory before SQLite gets to
// it: SQLite would open a read-only file and fail only on the first write.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return readOnlyError(path, "cannot create directory "+dir, err)
		}
		return &OpenError{Path: path, Detail: "cannot create directory " + dir, Err: err,
			Fix: "create the state directory or choose another one"}
	}
	dst, err := os.Stat(dir)
	if err != nil {
		return &OpenError{Path: path, Detail: err.Error(), Err: err, Fix: "check the state directory"}
	}
	if dst.Mode().Perm()&0o222 == 0 {
		return readOnlyError(path, "directory "+dir+" is not writable", nil)
	}
	fst, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// Made here, owner-only, rather than by SQLite with the umask's 0644: the memories and
		// tasks are private, and SQLite gives the -wal and -shm files the main file's mode.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return readOnlyError(path, "directory "+dir+" is not writable", err)
		}
		return f.Close()
	case err != nil:
		return &OpenError{Path: path, Detail: err.Error(), Err: err, Fix: "check the file and its directory"}
	case !fst.Mode().IsRegular():
		return &OpenError{Path: path, Detail: "not a regular file", Fix: "point the state directory at a directory holding only devicectl's files"}
	case fst.Mode().Perm()&0o222 == 0:
		return readOnlyError(path, "the file is not writable", nil)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return readOnlyError(path, "the file is not writable", err)
	}
	f.Close()
	// A database an older version made 0644 is made private too, with what SQLite left beside it;
	// best effort: a file owned by someone else keeps the mode they gave it.
	if fst.Mode().Perm()&0o077 != 0 {
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			os.Chmod(p, 0o600)
		}
	}
	return nil
}

// checkDB makes the first connection (applying the pragmas, which reads the
// header), checks the file's structure and proves it can be written.
func checkDB(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return err
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		if s != "ok" && len(problems) < 3 {
			problems = append(problems, s)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return &quickCheckError{problems}
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, not wal", mode)
	}
	// A write that is rolled back: a read-only file (on a read-only mount,
	// say) fails here rather than on the first Add.
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "CREATE TABLE devicectl_write_probe (x INTEGER)")
	if _, rerr := conn.ExecContext(ctx, "ROLLBACK"); err == nil {
		err = rerr
	}
	return err
}

// quickCheckError is what PRAGMA quick_check found.
type quickCheckError struct{ problems []string }

func (e *quickCheckError) Error() string {
	return "quick_check: " + strings.Join(e.problems, "; ")
}

// classify turns an error of opening or checking the database into an
// *OpenError whose kind says what to do.
func classify(path string, err error) error {
	var qe *quickCheckError
	if errors.As(err, &qe) {
		return corruptError(path, qe.Error(), err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return corruptError(path, se.Error(), err)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
			return readOnlyError(path, se.Error(), err)
		}
	}
	return &OpenError{Path: path, Detail: err.Error(), Err: err, Fix: "check the file, its directory and the disk"}
}
