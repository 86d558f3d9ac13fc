package faces_test

import (
	"fmt"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
)

func ExampleTerminalFace() {
	fmt.Print(faces.TerminalFace(hal.Smile))
	// Output:
	//         ▄████▄            ▄████▄
	//        ████████          ████████
	//        ████████          ████████
	//         ▀████▀            ▀████▀
	//
	//               ▀█▄      ▄█▀
	//                  ▀▀▀▀▀▀
}

func ExampleDraw() {
	img := faces.Draw(hal.Amazed, 128, 32) // for a 128x32 SSD1306
	fmt.Println(img.Bounds(), img.GrayAt(0, 0).Y)
	// Output: (0,0)-(128,32) 0
}
