// Package buildfeatures says which optional features this build of devicectl has. Each feature
// has a build tag that leaves it out and a pair of files, feature_<name>_enabled.go and
// feature_<name>_disabled.go, that set its Has<Name> constant, as tailscale's ts_omit_* tags do.
// The code of a feature sits in files with the same tag (cmd/devicectl's serve.go, sim.go,
// swarm.go, ...), so a build without it does not link it at all; the constants are for the
// stand-ins that remain and for `devicectl version`, which lists what a build leaves out.
//
// `make build` has every feature. `make cross` builds the board binaries (armv6, armv7, arm64,
// riscv64) with the Makefile's BOARD_TAGS, which leave out every feature below; amd64, for
// laptops and servers too, keeps everything. A command left out keeps its name: it says which tag
// left it out and that `make build` includes it, and exits 2. A config value that needs a feature
// left out (opentool.cert_file, toolsets.mcp, voice.stt command or openai, the wake word) is
// refused with the key named.
//
//	feature      tag                         leaves out
//	serve        devicectl_omit_serve        devicectl serve and the agent server it runs
//	sim          devicectl_omit_sim          devicectl sim (the agent server in-process)
//	swarm        devicectl_omit_swarm        devicectl swarm
//	http2        nethttpomithttp2            HTTP/2 in net/http (Go's own tag)
//	opentooltls  devicectl_omit_opentooltls  Go's TLS server, for HTTPS on opentool.listen
//	mcpsets      devicectl_omit_mcpsets      MCP servers as tool sets (the MCP Go SDK client)
//	stt          devicectl_omit_stt          speech to text on the device: the board sends audio
//	                                         to the server
//	wake         devicectl_omit_wake         the wake word (pocketsphinx)
//
// Why each is in BOARD_TAGS is its cost: the stripped armv6 binary must stay under the 9 MiB
// (9,437,184 bytes) budget that .ci/run holds it to, and the agent server (SQLite, A2A, the OpenAI
// client) alone is several times that. `make feature-sizes` measures, for the armv6 file, what
// omitting each tag alone saves from a build with everything and what putting each back into the
// board build costs, in the bytes loaded from the file (its sections but .bss), since the file
// itself grows by whole pages (make cross links the 32-bit ARM builds with -R 4096). serve and sim
// share the agent server and the console, so each alone saves little: they go together. HTTP/2 is
// cheap to lose: devicectl speaks HTTP/1.1 to servers (a WebSocket upgrade is HTTP/1.1, and
// OpenTool servers all speak it). Voice capture, detection and the mcp/user/* protocol stay in the
// board build.
package buildfeatures
