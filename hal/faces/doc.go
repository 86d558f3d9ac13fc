// Package faces is the one definition of how each hal.Expression looks.
// Every display draws the images of this package: the simulator's
// terminal, and an OLED such as the SSD1306 (128x64 or 128x32), so an
// expression looks the same wherever it is shown.
//
// A face is two eyes and a mouth drawn with simple geometry (filled
// circles, rings, lines and arcs with round caps, tear drops) designed on a
// 128x64 grid and scaled to the requested size:
//
//	idle              round open eyes, a straight mouth
//	smile             round open eyes, a U-shaped mouth
//	close_eyes_smile  closed eyes as arches (^ ^), a U-shaped mouth
//	close_eyes        closed eyes as flat lids, a straight mouth
//	amazed            big ringed eyes with pupils, an O mouth
//	cry               sad eyes under slanted brows, a tear under each, a frown
//
// Images are monochrome *image.Gray, 255 for a lit pixel and 0 for the
// background, like an OLED. Pixels are lit when the shapes cover at least
// half of them; strokes are whole pixels wide and feature centres are
// snapped to the pixel grid, so faces stay crisp and mirror-symmetric at
// small sizes. Drawing is deterministic: the same expression and size
// always give the same pixels, which the golden files in testdata pin
// (regenerate them after a deliberate change with go test -update).
//
// Terminal renders any image with Unicode half blocks, two pixel rows per
// text line; TerminalFace does so at TerminalWidth x TerminalHeight.
package faces
