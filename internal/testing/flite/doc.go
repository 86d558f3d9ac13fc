// Package flite gives tests real speech: what the flite synthesizer says, resampled by sox to
// the 16 kHz mono 16-bit WAV that the microphone, the voice detector and the speech-to-text
// programs take. A test that needs a voice (a detector finding an utterance, a listener hearing
// a command) uses it instead of a recording kept in the tree.
//
// Both programs are found through pulsetest.Need: missing, they skip the test, or fail it where
// DEVICECTL_REQUIRE_HW=1 says the machine must have them.
package flite
