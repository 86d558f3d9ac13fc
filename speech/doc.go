// Package speech says the agent server's replies aloud through a configured text-to-speech
// command.
//
// # Speaker
//
// A Speaker runs its command once per utterance, with the text on the command's stdin, and never
// through a shell, so no reply text can become shell syntax. The default is espeak-ng with a voice
// for the device's language (see DefaultCommand); espeak-ng speaks stdin when given no text
// argument. Any program that reads text on stdin, speaks it and exits will do. A pipeline needs a
// wrapper script, e.g. /usr/local/bin/say:
//
//	#!/bin/sh
//	exec piper --model /opt/piper/en.onnx --output_raw | aplay -q -r 22050 -f S16_LE -t raw -
//
// configured as hardware.speech.command: [/usr/local/bin/say]. Each command runs in its own
// process group and an interrupt kills the whole group, so aplay stops along with the script.
//
// Speak only queues: the agent's read loop must never wait for audio. Utterances are spoken one
// at a time in order; the queue is bounded and drops its oldest entry, with a log line, when the
// device falls far behind. Interrupt kills the running command and empties the queue; Halt does
// the same and waits until the command is gone; Close also stops the Speaker's goroutine. A
// command that fails is logged and the next utterance is tried; a command that is not installed
// is an error from NewSpeaker, so a misconfigured device says so at start-up rather than staying
// mute.
//
// # Narrator
//
// A Narrator turns the mcp/ai/message stream into utterances, following the rule of package
// device/turn so a reply is spoken exactly once whether the server streams it as chunks, sends it
// whole in "final", or both. By default it speaks the whole reply when "final" arrives. With
// Options.Sentences it speaks each sentence as soon as its chunks are in, which starts speaking
// sooner on long replies; sentences end at newlines, at 。！？, and at . ! ? followed by white
// space. Thoughts are never spoken. A new reply interrupts the rest of the previous one.
package speech
