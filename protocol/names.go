package protocol

// The methods of the device protocol.
const (
	// MethodRegisterTools is the device's first request on every connection.
	MethodRegisterTools = "mcp/registerTools"
	// MethodExecute is the server's request to run one of the device's tools.
	MethodExecute = "mcp/tool/execute"
	// MethodAIMessage is the server's notification carrying a piece of the model's reply.
	MethodAIMessage = "mcp/ai/message"

	// Beyond seed 002 (docs/voice.md): what the person said, as text or as audio, and their
	// speaking over a reply. A seed-002 server answers the requests CodeMethodNotFound and ignores
	// the notification.
	MethodUserText      = "mcp/user/text"
	MethodUserAudio     = "mcp/user/audio"
	MethodUserInterrupt = "mcp/user/interrupt"
)

// Features a server lists in its registration answer (RegisterResult.Features): the requests
// beyond seed 002 it takes.
const (
	FeatureUserText  = "user/text"
	FeatureUserAudio = "user/audio"
)

// The device's built-in tools (tools/builtin) that the agent calls by name: the two of seed 002
// and the status the agent's web page and rule planner read.
const (
	ToolVolume     = "amplify_volume"
	ToolExpression = "set_virtual_human_expression"
	ToolStatus     = "get_device_status"
)

// ToolNamePattern is the rule for a tool's name, as a regular expression: OpenAI's and
// Anthropic's for function names, which the protocol takes over so that a device's tools can be
// handed to those models as they are. ValidToolName checks it.
const ToolNamePattern = `^[a-zA-Z0-9_-]{1,64}$`

// ValidToolName reports whether name matches ToolNamePattern. It is a loop, not a regexp: every
// device checks its tools' names at start, and compiling the bounded repetition costs more
// memory than the whole check.
func ValidToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := range len(name) {
		if !toolNameByte(name[i]) {
			return false
		}
	}
	return true
}

// toolNameByte reports whether c may stand in a tool's name.
func toolNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
