package device

import (
	"encoding/json"

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
)

// JSON-RPC error codes the device answers with. The first five are JSON-RPC 2.0's own; the rest are
// server-defined and stay within -32000..-32099.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeToolFailed     = -32000
	CodeToolTimeout    = -32001
	CodeBusy           = -32002
)

// RegisterParams are the params of mcp/registerTools.
type RegisterParams struct {
	MAC   string              `json:"mac_addr"`
	Tools []tools.Declaration `json:"tools"`
}

// RegisterResult is the server's answer to a successful registration.
type RegisterResult struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
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
