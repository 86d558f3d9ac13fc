#!/usr/bin/env bash
# Installs the MCP reference server, @modelcontextprotocol/server-everything, pinned in
# tools/mcpset/testdata/everything (package-lock.json pins the rest; 2026.8.31 runs on node 20),
# and runs the tests that make it a device's tool set:
#   scripts/mcp-everything.sh                 install, then run it as a stdio and as a Streamable
#                                             HTTP tool set of a sim device (DEVICECTL_MCP_EVERYTHING=1
#                                             go test -run '^TestMCPEverything' ./internal/daemon/)
#   scripts/mcp-everything.sh --install-only  install only
# Needs node >= 20 and npm, and the npm registry (or a cache) for the install.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=tools/mcpset/testdata/everything

command -v node >/dev/null || { echo "mcp-everything: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "mcp-everything: npm is not installed" >&2; exit 1; }

# npm ci installs exactly the lock file and fails if package.json disagrees with it.
(cd "$dir" && npm ci --no-audit --no-fund)

case "${1:-}" in
--install-only)
	;;
"")
	DEVICECTL_MCP_EVERYTHING=1 ${GO:-go} test -count=1 -run '^TestMCPEverything' -v ./internal/daemon/
	;;
*)
	echo "usage: $0 [--install-only]" >&2
	exit 2
	;;
esac
