package buildfeatures

// Feature is one part of devicectl that a build tag can leave out.
type Feature struct {
	Name string // as `devicectl version` lists it
	Tag  string // the build tag that leaves it out
	Has  bool   // whether this build has it
	What string // what goes with it, for people
	// Command is the devicectl command the feature is, "" if none: a build without it keeps the
	// command's name, which then says the build leaves it out.
	Command string
}

// Features lists every feature that a tag can omit, in the order of the table in doc.go.
var Features = []Feature{
	{Name: "serve", Tag: "devicectl_omit_serve", Has: HasServe, Command: "serve",
		What: "devicectl serve: the agent server (device hub, planners, local tools, memory, A2A) with its console"},
	{Name: "sim", Tag: "devicectl_omit_sim", Has: HasSim, Command: "sim",
		What: "devicectl sim: the agent server in the process with a simulated device"},
	{Name: "swarm", Tag: "devicectl_omit_swarm", Has: HasSwarm, Command: "swarm",
		What: "devicectl swarm: many simulated devices against a server, for load tests"},
	{Name: "http2", Tag: "nethttpomithttp2", Has: HasHTTP2,
		What: "HTTP/2 in net/http (Go's own tag); devicectl speaks HTTP/1.1: the WebSocket upgrade, OpenTool"},
	{Name: "opentooltls", Tag: "devicectl_omit_opentooltls", Has: HasOpenToolTLS,
		What: "HTTPS for the device's OpenTool server (opentool.cert_file): Go's TLS server handshake"},
	{Name: "mcpsets", Tag: "devicectl_omit_mcpsets", Has: HasMCPSets,
		What: "MCP servers as device tool sets (toolsets.mcp): the MCP Go SDK's client"},
	{Name: "stt", Tag: "devicectl_omit_stt", Has: HasSTT,
		What: "speech to text on the device (voice.stt command, openai); the board sends audio to the server instead"},
	{Name: "wake", Tag: "devicectl_omit_wake", Has: HasWake,
		What: "the wake word (voice.listen wake) through pocketsphinx"},
}

// Omitted returns the features this build leaves out.
func Omitted() []Feature {
	var out []Feature
	for _, f := range Features {
		if !f.Has {
			out = append(out, f)
		}
	}
	return out
}

// Lookup returns the feature called name.
func Lookup(name string) (Feature, bool) {
	for _, f := range Features {
		if f.Name == name {
			return f, true
		}
	}
	return Feature{}, false
}
