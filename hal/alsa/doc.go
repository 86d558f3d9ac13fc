// Package alsa drives a speaker through an ALSA simple mixer control by
// running the amixer program (Debian package alsa-utils).
//
// Going through amixer rather than linking libasound keeps devicectl a
// static, cgo-free binary that cross-builds for any board; the price is one
// exec per operation, which is nothing next to a round trip to the agent
// server. amixer is run with an argument list, never through a shell, and
// each run is bound to the caller's context.
//
// Volumes are amixer's linear percentages of the control's raw range (the
// `[NN%]` it prints, and what `sset N%` sets), not the dB-mapped scale of
// alsamixer (-M). Volume reads the control back from the mixer every time;
// for a control with several channels it reports their mean, rounded to
// the nearest percent, and a channel whose playback switch is off counts as
// 0, because a muted speaker is silent whatever its level says.
//
// Halt sets the control to 0% and, if it has a playback switch, turns the
// switch off: on many codecs the lowest raw level is still audible (-63 dB,
// say), and only the switch is silence. SetVolume turns the switch back on,
// so the level it sets is the level heard.
//
// On a machine with PulseAudio and libasound2-plugins, Device "pulse" and
// Control "Master" reach the default sink through ALSA.
package alsa
