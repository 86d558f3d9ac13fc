// Package mic captures audio for voice input as hal.Microphone parts: 16 kHz mono 16-bit PCM
// from PulseAudio (parec), ALSA (arecord), any program that writes that PCM to its standard
// output, a WAV file, or a simulated microphone that something else speaks into.
//
// No cgo: the system's own capture programs do the audio I/O, and a program that dies is a
// capture error that names it and quotes its last words. A reader that falls behind loses the
// oldest audio, never blocks the capture: a microphone is live.
package mic
