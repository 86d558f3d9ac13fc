// Package stt is the agent server's speech to text: it turns one utterance a device heard
// (mcp/user/audio, 16 kHz mono 16-bit PCM) into the text a turn runs on.
//
// An Engine is one of:
//
//   - Command: any program that reads a WAV file and prints what was said on stdout
//     (agent.stt.command). Its argv may name {wav}, a file holding the utterance (else the WAV
//     comes on stdin), and {jsgf}, a JSGF grammar of what the planner understands with the tools
//     the device has now (Grammar). The packaged default, where pocketsphinx_continuous is on
//     PATH, is PocketSphinx with that grammar: a small grammar decodes commands exactly, where
//     the generic language model hears "set the value to thirty".
//   - OpenAI: any OpenAI-compatible /v1/audio/transcriptions endpoint (whisper.cpp's server,
//     faster-whisper, vLLM, LocalAI, cloud services), which also covers Chinese.
//   - None: no engine; every utterance is an error saying how to configure one.
//
// An engine returns "" when nothing was understood, and an error naming itself when it failed.
package stt
