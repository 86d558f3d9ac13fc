// Package buildfeatures says which optional features this build of devicectl has. Each feature
// has a build tag that leaves it out and a pair of files, feature_<name>_enabled.go and
// feature_<name>_disabled.go, that set its Has<Name> constant, as tailscale's ts_omit_* tags do.
// The code of a feature sits in files with the same tag (cmd/devicectl's serve.go, sim.go,
// swarm.go, ...), so a build without it does not link it at all; the constants are for the
// stand-ins that remain and for `devicectl version`, which lists what a build leaves out.
//
// `make build` has every feature. `make cross` builds the board binaries (armv6, armv7, arm64,
// riscv64) with the Makefile's BOARD_TAGS, which leave out all four below; amd64, for laptops and
// servers too, keeps everything. A command left out keeps its name: it says which tag left it out
// and that `make build` includes it, and exits 2.
//
// What each costs the stripped linux/armv6 binary, in bytes loaded from the file (its sections
// but .bss; the file itself grows in 64 KiB pages), as `make feature-sizes` measured it on
// 2026-11-23. "Alone" is what omitting only that tag saves from a build with everything; "in
// the board build" is what putting the feature back into the BOARD_TAGS build costs. serve and
// sim share the agent server and the console, so each alone saves little: they go together.
// The table was measured before the agent server (SQLite, A2A, the OpenAI client) joined serve
// and sim; since then the armv6 file with everything is 42,991,778 bytes and with BOARD_TAGS
// 9,371,810 (`make feature-sizes` measures it again): 65,374 bytes, one 64 KiB page, under the
// budget, since internal/config's generic item keys take pointers (see itemKey). call was part of
// sim until it moved into the board build with the daemon's control socket (9,175,202 bytes
// before, one 64 KiB page more after); sim's figures below still include it.
//
//	feature  tag                   leaves out                                      alone    in the board build
//	serve    devicectl_omit_serve  devicectl serve                                  6,715        87,583
//	sim      devicectl_omit_sim    devicectl sim (the in-process server)           32,563       113,335
//	swarm    devicectl_omit_swarm  devicectl swarm                                 52,170        52,757
//	http2    nethttpomithttp2      HTTP/2 in net/http (Go's own tag)              489,277       489,072
//	all four (BOARD_TAGS)                                                         662,184             -
//
// opentooltls (devicectl_omit_opentooltls, in BOARD_TAGS since issue 16) leaves out Go's TLS
// server, which HTTPS on opentool.listen needs; such a build refuses opentool.cert_file. Putting it
// back into the board build costs 184,872 bytes loaded (the file grows by three pages, 196,608
// bytes, to 9,371,810), measured by hand on 2026-11-23.
//
// mcpsets (devicectl_omit_mcpsets, in BOARD_TAGS since issue 14) leaves out MCP servers as tool
// sets, whose MCP Go SDK client costs the board build 1,441,792 bytes of file (measured by hand on
// 2026-11-23): past the budget. Such a build refuses toolsets.mcp.
//
// stt (devicectl_omit_stt) and wake (devicectl_omit_wake), in BOARD_TAGS since voice input,
// leave out speech to text on the device (voice.stt command, openai: the board sends audio to the
// server) and the wake word (pocketsphinx); such a build refuses those values. Voice capture,
// detection and the mcp/user/* protocol stay in the board build: with them the armv6 file is
// 9,568,418 bytes (measured by hand on 2026-11-26), three 64 KiB pages more than without, and
// over the budget; on-device speech to text and the wake word would add one page more.
//
// Before the agent server the armv6 file was 9,830,562 bytes with everything and 9,109,666 with
// BOARD_TAGS, against the budget of 9 MiB (9,437,184) that .ci/run holds it to. HTTP/2 is the largest: devicectl speaks
// HTTP/1.1 to servers (a WebSocket upgrade is HTTP/1.1, and OpenTool servers all speak it), so
// a board loses nothing by it.
package buildfeatures
