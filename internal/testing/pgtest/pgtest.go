// Package pgtest gives tests a PostgreSQL database of their own: a fresh, empty schema (DSN),
// dropped when the test ends, on the server DEVICECTL_TEST_POSTGRES names or, without it, on a
// throwaway server this package starts from Debian's binaries (initdb and postgres, package
// postgresql) with its own data directory in a temporary directory, listening on a unix socket
// there and on no TCP port. As root it runs the server as the user postgres (or nobody), which
// PostgreSQL insists on. The server starts at the first DSN and is stopped by Main (TestMain),
// or with the test binary, whose death it follows (a parent-death signal).
//
// With neither the variable nor the binaries the test is skipped, or fails when
// DEVICECTL_REQUIRE_HW is 1 (CI), as for every program a test needs (see pulsetest).
//
// The throwaway server runs without fsync: it holds nothing worth a disk flush, and the tests of
// several packages share two cores. Benchmarks that mean to measure PostgreSQL's own cost run
// against a server of their own through DEVICECTL_TEST_POSTGRES.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// EnvDSN names the environment variable holding the URL of a PostgreSQL database the tests may
// create schemas in (postgres://USER@HOST:PORT/DB); unset, a throwaway server is started.
const EnvDSN = "DEVICECTL_TEST_POSTGRES"

var (
	mu       sync.Mutex
	base     string // the admin URL: EnvDSN, or the started server's
	srv      *server
	startErr error
	schemas  int
)

// DSN returns the URL of a new empty schema, set as the connections' search_path, so that what
// the test creates is its own; the schema is dropped when tb ends (after the test's own
// cleanups registered later, which close its connections).
func DSN(tb testing.TB) string {
	tb.Helper()
	admin, err := adminURL()
	if err != nil {
		if errors.Is(err, errNoBinaries) {
			pulsetest.Unavailable(tb, "postgresql", "no PostgreSQL to test against: %s is unset and %v", EnvDSN, err)
		}
		tb.Fatalf("pgtest: %v", err)
	}
	mu.Lock()
	schemas++
	schema := fmt.Sprintf("t_%d_%d", os.Getpid(), schemas)
	mu.Unlock()
	if err := adminExec(admin, `CREATE SCHEMA `+schema); err != nil {
		tb.Fatalf("pgtest: creating schema %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		if err := adminExec(admin, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Errorf("pgtest: dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// adminExec runs a statement on a connection of its own.
func adminExec(dsn, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, stmt)
	return err
}

// adminURL is EnvDSN, else the URL of the server started here (at the first call).
func adminURL() (string, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
			return "", fmt.Errorf("%s must be a postgres:// URL", EnvDSN)
		}
		return dsn, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if base == "" && startErr == nil {
		srv, startErr = start()
		if startErr == nil {
			base = srv.url
		}
	}
	return base, startErr
}

// Main runs a package's tests with run (testing.M's Run, or leakcheck.Main where the package
// checks for goroutines left running), then Stop, and returns run's code. From TestMain:
// os.Exit(pgtest.Main(m, (*testing.M).Run)).
func Main(m *testing.M, run func(*testing.M) int) int {
	code := run(m)
	Stop()
	return code
}

// Stop stops the server DSN started, if it did, and removes its directory. Main calls it.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		srv.stop()
	}
	srv, base, startErr = nil, "", nil
}

// errNoBinaries is a machine without PostgreSQL's server programs.
var errNoBinaries = errors.New("PostgreSQL's server programs (initdb, postgres) are not installed")

// binDir is the directory of initdb and postgres: on PATH, else Debian's
// /usr/lib/postgresql/VERSION/bin, the newest.
func binDir() (string, error) { return findBinDir(exec.LookPath, "/usr/lib/postgresql/*/bin") }

func findBinDir(lookPath func(string) (string, error), debian string) (string, error) {
	if p, err := lookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob(debian)
	version := func(dir string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, dir := range dirs {
		_, errP := os.Stat(filepath.Join(dir, "postgres"))
		_, errI := os.Stat(filepath.Join(dir, "initdb"))
		if errP == nil && errI == nil {
			return dir, nil
		}
	}
	return "", errNoBinaries
}

// server is a postgres process started here.
type server struct {
	cmd *exec.Cmd
	dir string // the temporary directory: data/, the socket, the logs
	url string
}

// port only names the socket file (.s.PGSQL.5432) in the server's own directory: no TCP.
const port = "5432"

func start() (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// A unix socket's path must fit in 108 bytes: a short directory of its own.
	dir, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	cred, err := serverUser(dir)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initLog := filepath.Join(dir, "initdb.log")
	if err := s.run(cred, initLog, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		out, _ := os.ReadFile(initLog)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	// Its output goes to a file, not a pipe: exec.Cmd then starts no goroutine to copy it, and
	// the tests' leak checks see none.
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", port,
		"--listen_addresses=", "--fsync=off", "--synchronous_commit=off", "--full_page_writes=off",
		"--shared_buffers=16MB", "--max_connections=100")
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	s.url = "postgres://postgres@localhost/postgres?host=" + url.QueryEscape(dir) + "&port=" + port + "&sslmode=disable"
	if err := s.waitReady(30 * time.Second); err != nil {
		out, _ := os.ReadFile(logPath)
		s.stop()
		return nil, fmt.Errorf("postgres did not come up: %v\n%s", err, out)
	}
	ok = true
	return s, nil
}

// serverUser is who runs initdb and postgres: nil (this process's user) unless that is root,
// which PostgreSQL refuses; then postgres, or nobody, who is given dir.
func serverUser(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		if u, err = user.Lookup("nobody"); err != nil {
			return nil, fmt.Errorf("running as root, and neither the user postgres nor nobody exists to run the server: %w", err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false}, nil
}

// run runs a program as cred to its end, its output into the file logPath.
func (s *server) run(cred *syscall.Credential, logPath, program string, args ...string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(program, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd.Run()
}

// waitReady polls until the server takes a connection, or fails when it exits first.
func (s *server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(s.cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid == s.cmd.Process.Pid {
			s.cmd = nil // reaped here: nothing to stop
			return fmt.Errorf("postgres exited (status %d)", ws.ExitStatus())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.url)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server at once (its data is thrown away) and removes its directory.
func (s *server) stop() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGQUIT)
		s.cmd.Wait()
		s.cmd = nil
	}
	os.RemoveAll(s.dir)
}
