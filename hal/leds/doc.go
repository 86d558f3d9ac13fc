// Package leds shows hal.Expressions on a ring or strip of addressable
// RGB LEDs: APA102 (and SK9822) with periph.io's apa102 driver, or WS2812
// (NeoPixel, WS2812B, SK6812 RGB) with its nrzled driver, both over SPI.
//
// # Patterns
//
// Each expression is a static pattern, one table for both kinds of LED
// (Pattern returns it). A colour is scaled by the expression's level, then
// by the configured brightness, linearly:
//
//	expression        colour        R,G,B        level  LEDs lit
//	idle              soft white    255,214,170    25%  all
//	smile             warm yellow   255,170,0     100%  all
//	close_eyes        blue          30,60,255      15%  all
//	close_eyes_smile  warm orange   255,120,20     35%  two arcs, centres 1/5..2/5 and 3/5..4/5 along
//	amazed            white         255,255,255   100%  all
//	cry               blue          0,70,255       60%  every third, from LED 0
//
// A lit LED never rounds to black: at the lowest brightness its strongest
// channel stays at 1, so a dim expression is not mistaken for a halted face.
//
// LED 0 is the first after the data input. On a ring with LED 0 at the
// bottom, the two arcs sit at about ten and two o'clock, like closed smiling
// eyes. A strip too short for a shape (two arcs on one LED) shows its
// colour on every LED.
//
// # Wiring (Raspberry Pi header, SPI0)
//
// APA102 (NewAPA102), four wires:
//
//	DI  (data in)   GPIO10/MOSI  pin 19
//	CI  (clock in)  GPIO11/SCLK  pin 23
//	5V              a 5 V supply sized for the strip (about 60 mA per LED at
//	                full white); pin 2 or 4 for a few LEDs at low brightness
//	GND             GND pin 6, shared with the supply
//
// WS2812 (NewWS2812), one data wire:
//
//	DIN  GPIO10/MOSI pin 19 (SCLK is not connected)
//	5V and GND as for the APA102
//
// Enable SPI (dtparam=spi=on) and run as a user in the spi group. The LEDs
// have no chip select: give them the port alone (SPI0.0's CE0, GPIO8 pin 24,
// stays unconnected). The Pi's 3.3 V data usually drives an APA102 and a
// short WS2812 strip; a 74AHCT125 level shifter makes it reliable. The
// WS2812 timing hangs on the SPI clock: on a Raspberry Pi fix the core
// clock (core_freq=250 on a Pi 3, core_freq_min=500 on a Pi 4), and for
// more than about 340 LEDs raise spidev.bufsiz.
//
// # Behaviour
//
// A constructor shows the initial expression (hal.Idle unless Options say
// otherwise). SPI has no acknowledgement, so a missing strip is not an
// error. Every change sends the whole strip. Halt turns every LED off; the
// face then reports hal.Idle, as every halted hal.Face does. A Face is safe
// for concurrent use.
package leds
