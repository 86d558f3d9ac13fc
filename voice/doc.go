// Package voice turns what a microphone hears into utterances for the agent server: capture,
// voice activity detection (a pure-Go energy detector with an adaptive noise floor), and the
// moments a person starts and stops speaking, which barge-in and push-to-talk act on.
//
// A Detector is fed 20 ms frames in order and says when speech has started (SpeechStarted, the
// cue to stop the device's own speaking) and when an utterance has ended (Utterance, with its
// samples from a short pre-roll before the speech to the last speech frame and a little after).
// Its parameters are the voice.vad config keys.
package voice
