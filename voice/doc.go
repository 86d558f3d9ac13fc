// Package voice turns what a microphone hears into utterances for the agent server: capture,
// voice activity detection (a pure-Go energy detector with an adaptive noise floor), and the
// moments a person starts and stops speaking, which barge-in and push-to-talk act on.
//
// A Detector is fed 20 ms frames in order and says when speech has started (SpeechStarted, the
// cue to stop the device's own speaking) and when an utterance has ended (Utterance, with its
// samples from a short pre-roll before the speech to the last speech frame and a little after).
// Its parameters are the voice.vad config keys.
//
// A Listener owns the capture: one goroutine reads the microphone and runs the detector, and
// delivers utterances on a channel (the oldest dropped if nobody takes them). Its modes are the
// values of voice.listen: ModeVAD takes every utterance; ModeButton takes what is said while a
// push-to-talk GPIO is held (periph gpio, edge-triggered, on a second goroutine); ModeWake takes
// the utterance that begins after a Spotter (PocketSphinx, pocketsphinx's keyword search fed the
// same audio) heard the keyword. Halt stops it and waits for its goroutines.
//
// A Pipeline sends each utterance to the server (Server, which *device.Agent is): as audio
// (mcp/user/audio), or as text when a Transcriber (CommandSTT, OpenAISTT) works on the device
// (mcp/user/text). Its SpeechStarted is the Listener's OnSpeech: while the device speaks, it
// silences the reply (Mouth, which speech.Narrator is) and tells the server (mcp/user/interrupt).
package voice
