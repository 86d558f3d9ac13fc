// Package max9744 drives a Maxim MAX9744 20 W stereo class-D amplifier
// (e.g. Adafruit's breakout) over I²C with periph.io.
//
// The chip takes one command byte per transfer. A byte whose two high bits
// are 00 sets the volume to its low six bits: 64 positions, 0 being full
// mute and 63 the loudest (+9.5 dB). Percent p is written as position
// round(p × 63 / 100), halves rounding up, so 0% is mute, 100% is 63, the
// mapping never decreases, and every one of the 64 positions is some
// percent's (the positions are 1.6 percent apart, so several percents share
// one).
//
// The MAX9744 cannot be read. Its datasheet calls it a receive-only slave
// that "cannot write to the SDA bus except to acknowledge the receipt of
// data". So Volume reports the percent last written and acknowledged: the
// chip holds exactly the position computed from it, and nothing else
// writes to it in I²C mode short of another bus master. An acknowledged
// write is the only evidence the chip gives. After a write that failed the
// chip's position is not known, and Volume says so with an error until a
// later write succeeds. That is also why New writes (mute) rather than
// reads: a write is the one transfer that can find the chip, and it leaves
// the volume known. The chip's own power-up position (40) is invisible to
// software.
//
// Halt writes position 0, which the chip treats as full mute.
package max9744
