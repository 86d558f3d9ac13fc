package term

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a new pseudo-terminal pair and returns its terminal end.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pty: %v", err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}

func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "script"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()

	for name, f := range map[string]any{
		"/dev/null (a character device, not a terminal)": null,
		"a pipe":         r,
		"a regular file": file,
		"not a file":     "stdin",
	} {
		if IsTerminal(f) {
			t.Errorf("%s: IsTerminal = true, want false", name)
		}
	}
	if pts := openPTY(t); !IsTerminal(pts) {
		t.Error("a pseudo-terminal: IsTerminal = false, want true")
	}
}

// EditMode turns off the driver's line editing and echo but keeps Ctrl-C's SIGINT and the
// carriage return of output newlines; restore puts every setting back.
func TestEditMode(t *testing.T) {
	pts := openPTY(t)
	fd := int(pts.Fd())
	before, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	restore, err := EditMode(pts)
	if err != nil {
		t.Fatal(err)
	}
	during, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if during.Lflag&(unix.ICANON|unix.ECHO) != 0 {
		t.Errorf("edit mode: lflag %#x still has ICANON or ECHO", during.Lflag)
	}
	if during.Lflag&unix.ISIG == 0 || during.Oflag&unix.OPOST == 0 {
		t.Errorf("edit mode: lflag %#x oflag %#x: ISIG and OPOST must stay on", during.Lflag, during.Oflag)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	after, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("after restore: %+v, want %+v", *after, *before)
	}
	if _, err := EditMode(os.Stdin); err == nil && !IsTerminal(os.Stdin) {
		t.Error("EditMode of a stream that is not a terminal did not fail")
	}
}
