package protocol

import (
	"encoding/json"
	"time"
)

// RegisterParams are the params of mcp/registerTools. Tools is the tool declarations: the device
// sends []tools.Declaration (a type this package cannot import), the server reads
// json.RawMessage, counting and scanning the declarations before it decodes them.
type RegisterParams[T any] struct {
	MAC   string `json:"mac_addr"`
	Tools T      `json:"tools"`
}

// RegisterResult is the server's answer to a registration it took.
type RegisterResult struct {
	Status   string   `json:"status"` // StatusRegistered
	Message  string   `json:"message"`
	Features []string `json:"features,omitempty"` // what the server takes beyond seed 002
}

// ExecuteParams are the params of mcp/tool/execute.
type ExecuteParams struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// ExecuteResult is what the built-in tools answer with; any JSON value is a valid result.
type ExecuteResult struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Statuses of the results above.
const (
	StatusRegistered = "registered" // RegisterResult
	StatusSuccess    = "success"    // ExecuteResult: the tool did it
	// StatusSuperseded is the ExecuteResult of a waiting control call that a later call to the
	// same tool replaced before it ran.
	StatusSuperseded = "superseded"
	StatusAccepted   = "accepted" // UserResult: a turn runs on what was said
	StatusEmpty      = "empty"    // UserResult: the audio held nothing understood
)

// AIMessage is the params of mcp/ai/message.
type AIMessage struct {
	Type    string `json:"type"` // MessageChunk, MessageFinal or MessageThought; others are ignored
	Content string `json:"content"`
}

// The types of AIMessage. device/turn applies their rule.
const (
	MessageChunk   = "chunk"   // a piece of the reply: append
	MessageFinal   = "final"   // the whole reply; it ends the turn
	MessageThought = "thought" // the model's reasoning, never part of the reply
)

// UserTextParams are the params of mcp/user/text: what the person said, as text.
type UserTextParams struct {
	Text   string `json:"text"`
	Lang   string `json:"lang,omitempty"`
	Source string `json:"source,omitempty"` // SourceVoice when heard, not typed
}

// SourceVoice is UserTextParams.Source for text the device heard and transcribed itself.
const SourceVoice = "voice"

// UserAudioParams are the params of mcp/user/audio: one utterance, for the server to transcribe.
type UserAudioParams struct {
	Format   string `json:"format"` // AudioFormat
	Rate     int    `json:"rate"`   // AudioRate
	Channels int    `json:"channels"`
	Audio    []byte `json:"audio"` // base64 on the wire
	Lang     string `json:"lang,omitempty"`
}

// The audio mcp/user/audio carries: 16 kHz mono signed 16-bit little-endian, at most
// MaxUtterance of it unless the server says otherwise.
const (
	AudioFormat  = "pcm_s16le"
	AudioRate    = 16000
	MaxUtterance = 30 * time.Second
)

// UserResult is the server's answer to mcp/user/text and mcp/user/audio.
type UserResult struct {
	Status string `json:"status"`         // StatusAccepted or StatusEmpty
	Text   string `json:"text,omitempty"` // mcp/user/audio: what the server heard
	TurnID string `json:"turn_id,omitempty"`
}
