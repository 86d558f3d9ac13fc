// Package mcpserver makes the agent server's devices, and its own tools, the tools of a standard
// MCP server (github.com/modelcontextprotocol/go-sdk), so that any MCP host (a desktop assistant,
// an IDE, the MCP Inspector) can drive the robots that `devicectl serve` holds.
//
// # Tool names
//
// A device's tool is listed as DEVICE__TOOL (Sep), where DEVICE is the device's alias from
// agent.device_aliases (Options.Aliases), else its MAC as the protocol writes it
// (AA-BB-CC-DD-EE-FF): desk__amplify_volume, AA-BB-CC-DD-EE-FF__get_device_status. Every name
// fits ^[a-zA-Z0-9_-]{1,64}$, the pattern OpenAI's and Anthropic's APIs hold function names to
// (a dot, MCP's usual separator, is refused there), so a host may hand them to a model as they
// are. A device's name holds no "__" and no "_" at either end, so the first "__" ends it; a name
// that would be over 64 bytes is shortened deterministically (ToolName), and a call is resolved
// through the names listed, never by parsing. The tool's Title ("TOOL on DEVICE") and its
// _meta["devicectl/tool"] keep the device's own name. The server's local tools (calculate,
// search_web, add_user_memory, ...) keep their names: they hold no "__", so they never clash with
// a device's. A tool's description and input schema are those its device declared.
//
// When the local tools include announce (reminders.ToolAnnounce), each device also gets
// DEVICE__announce {text}: it calls the local announce tool with the device's MAC, so the device
// shows and speaks the text as every announcement does, and no argument can send it to another
// device. It is listed and removed with the device's own tools; a device that declares a tool
// named announce keeps its own under that name.
//
// # Devices come and go
//
// The server follows the hub's events: a device that registers adds its tools, one that
// registers again with other tools replaces them, one whose line ends removes them. Each change
// makes the SDK send notifications/tools/list_changed to every session. A call to a tool of a
// device that has just disconnected is a tool error saying so (when it went and why), not a bare
// "unknown tool".
//
// # Calls
//
// tools/call follows seed 002's rules as the agent's own turns do: the input is checked against
// the schema the device declared; a query tool waits for the device's answer; a control tool
// answers {"status":"success"} at once and the call goes on in the background, unless
// Options.WaitForControl (agent.wait_for_control) makes it wait too. What goes wrong with the
// tool is an MCP tool error (CallToolResult.IsError) whose text carries the detail: input the
// schema refuses, the device's JSON-RPC error (code, message, data.details), a device that
// disconnected before or during the call, no answer within Options.CallTimeout. What is wrong
// with the request itself is a JSON-RPC error: an unknown tool as the SDK answers it, a body that
// is not JSON as -32700 Parse error.
//
// # Transports
//
// Handler serves the Streamable HTTP transport (agent/server mounts it at /mcp), behind the bearer
// token Options.Token when one is set.
//
// # Sessions
//
// A session is closed after Options.SessionIdle without a POST (agent.limits.mcp_session_idle;
// a GET stream open is listening, not use). At most Options.MaxSessions are open
// (agent.limits.mcp_sessions): opening one more closes the session unused longest, whose host
// gets 404 on its next request and starts a new session, as the transport says. Hosts that
// initialize and vanish so cannot hold memory or lock a new host out; only when every session has
// a POST running is a new one refused, with 503 and a JSON-RPC error naming the limit. Proxy serves the same tools over stdio for hosts that
// launch a command (`devicectl mcp --server http://ADDR`): it is a client of the HTTP endpoint
// and mirrors its tools, following its list_changed notifications.
package mcpserver
