// Package graydiff compares 8-bit gray images pixel for pixel, for the tests of what a face
// draws (hal/faces' goldens, the frames hal/oled sends).
package graydiff

import (
	"fmt"
	"image"
)

// Diff describes how got differs from want: its bounds, or how many pixels differ and the first
// of them. It returns "" when the two are the same.
func Diff(got, want *image.Gray) string {
	if got.Bounds() != want.Bounds() {
		return fmt.Sprintf("bounds %v, want %v", got.Bounds(), want.Bounds())
	}
	n, first := 0, image.Point{}
	b := got.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if got.GrayAt(x, y) != want.GrayAt(x, y) {
				if n == 0 {
					first = image.Pt(x, y)
				}
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d pixels differ, the first at %v (got %d, want %d)",
		n, first, got.GrayAt(first.X, first.Y).Y, want.GrayAt(first.X, first.Y).Y)
}
