package graydiff

import (
	"image"
	"image/color"
	"os"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func TestDiff(t *testing.T) {
	a := image.NewGray(image.Rect(0, 0, 4, 3))
	b := image.NewGray(image.Rect(0, 0, 4, 3))
	if d := Diff(a, b); d != "" {
		t.Errorf("Diff of equal images = %q", d)
	}
	b.SetGray(2, 1, color.Gray{Y: 200})
	b.SetGray(3, 2, color.Gray{Y: 9})
	if d, want := Diff(a, b), "2 pixels differ, the first at (2,1) (got 0, want 200)"; d != want {
		t.Errorf("Diff = %q, want %q", d, want)
	}
	if d, want := Diff(a, image.NewGray(image.Rect(0, 0, 4, 4))), "bounds (0,0)-(4,3), want (0,0)-(4,4)"; d != want {
		t.Errorf("Diff = %q, want %q", d, want)
	}
}
