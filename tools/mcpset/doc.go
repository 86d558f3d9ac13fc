// Package mcpset makes the tools of a standard MCP server device tools: a tool set beside the
// OpenTool and OpenAPI ones (toolsets.mcp in the config).
//
// A Set talks to one server with the official MCP Go SDK's client, either over stdio (a program
// started from an argv, never through a shell, in a process group of its own that is killed as a
// group when the session ends) or over Streamable HTTP (a URL, with an optional bearer token).
//
// The server's tools are declared under a prefix ("everything_echo" for the server's "echo"),
// main_type remote, sub_type query unless configured otherwise, with the server's input schema as
// parameters. A tool the device protocol cannot carry (a name outside ^[a-zA-Z0-9_-]{1,64}$ once
// prefixed, no description, a schema the device cannot validate) is left out with a warning that
// names the server and the tool; the rest are served.
//
// A call of a declared tool is forwarded as tools/call. A result with isError is the device tool's
// failure (-32000 upstream) carrying the server's text; a structured result is the device's
// result as it is, text content is a string, other content the list of content objects.
//
// Set.Run keeps the session: it connects (start, initialize and the first tools/list within
// Options.InitTimeout), hands the tools to its update function, lists them again on
// notifications/tools/list_changed (coalesced: a flood costs one list at most every
// Options.RelistEvery, no memory and no log lines), and when the session ends (the program died,
// the server went away, or stopped answering the pings sent every 30 s) hands nil, so that the
// device stops declaring the tools, and starts again after a jittered back-off. A call running
// when the server dies fails with an error saying so.
//
// A stdio server's environment holds only InheritedEnv of devicectl's (PATH, HOME, ...) plus
// Options.Env: a secret devicectl was given in its environment is not handed on.
package mcpset
