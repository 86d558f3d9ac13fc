//go:build unix

package logging

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestIsJournal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stream"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf("%d:%d", st.Dev, st.Ino)

	closed, err := os.Create(filepath.Join(t.TempDir(), "closed"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()

	for _, tt := range []struct {
		name   string
		f      *os.File
		stream string
		want   bool
	}{
		{"its own device and inode", f, own, true},
		{"wrong inode", f, fmt.Sprintf("%d:%d", st.Dev, st.Ino+1), false},
		{"wrong device", f, fmt.Sprintf("%d:%d", st.Dev+1, st.Ino), false},
		{"garbage", f, "garbage", false},
		{"not decimal", f, fmt.Sprintf("%x:%x", st.Dev, st.Ino) + "z", false},
		{"extra field", f, own + ":1", false},
		{"empty", f, "", false},
		{"closed file", closed, own, false},
		{"nil file", nil, own, false},
	} {
		getenv := func(key string) string {
			if key == "JOURNAL_STREAM" {
				return tt.stream
			}
			return ""
		}
		if got := IsJournal(tt.f, getenv); got != tt.want {
			t.Errorf("%s: IsJournal with JOURNAL_STREAM=%q = %v, want %v", tt.name, tt.stream, got, tt.want)
		}
	}
}
