package device

import (
	"encoding/json"
	"time"

	"github.com/devicectl/devicectl/device/turn"
	"github.com/devicectl/devicectl/tools"
)

// Method names of the device protocol (docs/protocol.md, seed 002).
const (
	// MethodRegisterTools is the device's first request on every connection.
	MethodRegisterTools = "mcp/registerTools"
	// MethodExecute is the server's request to run one of the device's tools.
	MethodExecute = "mcp/tool/execute"
	// MethodAIMessage is the server's notification carrying a piece of the model's reply.
	MethodAIMessage = "mcp/ai/message"

	// Beyond seed 002 (VOICE.md): what the person said, as text or as audio, and their speaking
	// over a reply. A seed-002 server answers the requests -32601 and ignores the notification.
	MethodUserText      = "mcp/user/text"
	MethodUserAudio     = "mcp/user/audio"
	MethodUserInterrupt = "mcp/user/interrupt"
)

// Features a server lists in its registration answer: the requests beyond seed 002 it takes.
const (
	FeatureUserText  = "user/text"
	FeatureUserAudio = "user/audio"
)

// RegisterParams are the params of mcp/registerTools.
type RegisterParams struct {
	MAC   string              `json:"mac_addr"`
	Tools []tools.Declaration `json:"tools"`
}

// RegisterResult is the server's answer to a successful registration.
type RegisterResult struct {
	Status   string   `json:"status"`
	Message  string   `json:"message,omitempty"`
	Features []string `json:"features,omitempty"`
}

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
	Rate     int    `json:"rate"`
	Channels int    `json:"channels"`
	Audio    []byte `json:"audio"` // base64 on the wire
	Lang     string `json:"lang,omitempty"`
}

// The audio mcp/user/audio carries: 16 kHz mono signed 16-bit little-endian, at most
// MaxUtterance of it.
const (
	AudioFormat  = "pcm_s16le"
	AudioRate    = 16000
	MaxUtterance = 30 * time.Second
)

// UserResult is the server's answer to mcp/user/text and mcp/user/audio.
type UserResult struct {
	Status string `json:"status"`         // UserAccepted or UserEmpty
	Text   string `json:"text,omitempty"` // mcp/user/audio: what the server heard
	TurnID string `json:"turn_id,omitempty"`
}

// The statuses of UserResult.
const (
	UserAccepted = "accepted"
	UserEmpty    = "empty" // nothing was understood
)

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

// AI message types. Unknown types are ignored (logged at debug). Package turn applies their rule.
const (
	MessageChunk   = turn.Chunk
	MessageFinal   = turn.Final
	MessageThought = turn.Thought
)

// AIMessage is the params of mcp/ai/message. It is an alias so that speech and hooks can take
// messages from package turn without importing device.
type AIMessage = turn.Message

// ErrorData is the data member of the device's error responses.
type ErrorData struct {
	Details string `json:"details"`
}
