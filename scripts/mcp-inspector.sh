#!/usr/bin/env bash
# Installs the MCP Inspector pinned in agent/mcpserver/testdata/inspector (@modelcontextprotocol/
# inspector 0.15.0, the newest that runs on node 20; package-lock.json pins the rest) and runs its
# CLI mode against devicectl serve's MCP server:
#   scripts/mcp-inspector.sh                 install, then run the Go tests that start serve with a
#                                            sim device and drive it with the Inspector's CLI, over
#                                            HTTP (TestInspector in agent/mcpserver) and through the
#                                            devicectl mcp command (TestMCPCommandInspector in
#                                            cmd/devicectl), with DEVICECTL_MCP_INSPECTOR=1
#   scripts/mcp-inspector.sh --install-only  install only
#   scripts/mcp-inspector.sh --url URL [ARGS...]
#                                            install, then run the Inspector's CLI against a running
#                                            serve's endpoint, e.g. --url http://127.0.0.1:8765/mcp
#                                            (ARGS default to --method tools/list)
# Needs node >= 20 and npm, and the npm registry (or a cache) for the install.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=agent/mcpserver/testdata/inspector

command -v node >/dev/null || { echo "mcp-inspector: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "mcp-inspector: npm is not installed" >&2; exit 1; }

# npm ci installs exactly the lock file and fails if package.json disagrees with it.
(cd "$dir" && npm ci --no-audit --no-fund)

case "${1:-}" in
--install-only)
	;;
--url)
	[ -n "${2:-}" ] || { echo "usage: $0 --url URL [ARGS...]" >&2; exit 2; }
	url=$2
	shift 2
	[ $# -gt 0 ] || set -- --method tools/list
	(cd "$dir" && npx --no-install @modelcontextprotocol/inspector --cli "$url" --transport http "$@")
	;;
"")
	DEVICECTL_MCP_INSPECTOR=1 ${GO:-go} test -count=1 -run '^TestInspector$' -v ./agent/mcpserver/
	DEVICECTL_MCP_INSPECTOR=1 ${GO:-go} test -count=1 -run '^TestMCPCommandInspector$' -v ./cmd/devicectl/
	;;
*)
	echo "usage: $0 [--install-only | --url URL [ARGS...]]" >&2
	exit 2
	;;
esac
