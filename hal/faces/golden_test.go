package faces

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/testing/graydiff"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenSizes are the sizes whose images are pinned as PNG files: the two
// SSD1306 panels.
var goldenSizes = [][2]int{{128, 64}, {128, 32}}

func TestGoldenImages(t *testing.T) {
	for _, e := range hal.Expressions() {
		for _, sz := range goldenSizes {
			name := fmt.Sprintf("%s_%dx%d.png", e, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				got := Draw(e, sz[0], sz[1])
				path := filepath.Join("testdata", name)
				if *update {
					var buf bytes.Buffer
					if err := png.Encode(&buf, got); err != nil {
						t.Fatal(err)
					}
					writeGolden(t, path, buf.Bytes())
					return
				}
				want := readPNG(t, path)
				if msg := graydiff.Diff(got, want); msg != "" {
					t.Errorf("%s: %s\nlook at the image, then run go test -update if the change is meant", path, msg)
				}
			})
		}
	}
}

func TestGoldenTerminal(t *testing.T) {
	for _, e := range hal.Expressions() {
		name := fmt.Sprintf("%s_terminal.txt", e)
		t.Run(name, func(t *testing.T) {
			got := TerminalFace(e)
			path := filepath.Join("testdata", name)
			if *update {
				writeGolden(t, path, []byte(got))
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs; got:\n%s\nwant:\n%s\nrun go test -update if the change is meant", path, got, want)
			}
		})
	}
}

func writeGolden(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readPNG(t *testing.T, path string) *image.Gray {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	g, ok := img.(*image.Gray)
	if !ok {
		t.Fatalf("%s: decoded as %T, want an 8-bit gray PNG", path, img)
	}
	return g
}
