#!/usr/bin/env bash
# Installs the npm @a2a-js/sdk clients pinned in agent/a2a/testdata/js (1.3.0 speaks A2A 1.0
# through ClientFactory, 0.3.14 speaks A2A 0.3 through A2AClient; package-lock.json pins the
# rest) and runs them:
#   scripts/a2a-js.sh                 install, then run them against an in-process server
#                                     (DEVICECTL_A2A_JS=1 go test -run '^TestJSClients$' ./agent/a2a/)
#   scripts/a2a-js.sh --install-only  install only
#   scripts/a2a-js.sh --url URL       install, then run them against a running server (e.g. devicectl
#                                     serve with a device attached); A2A_TOKEN, A2A_MAC, A2A_TEXT,
#                                     A2A_WANT_REPLY and A2A_SLOW_TEXT (a turn that runs until it
#                                     is canceled) tune check.mjs, see its header.
# Needs node >= 20 and npm, and the npm registry (or a cache) for the install.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=agent/a2a/testdata/js

command -v node >/dev/null || { echo "a2a-js: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "a2a-js: npm is not installed" >&2; exit 1; }

# npm ci installs exactly the lock file and fails if package.json disagrees with it.
(cd "$dir" && npm ci --no-audit --no-fund)

case "${1:-}" in
--install-only)
	;;
--url)
	[ -n "${2:-}" ] || { echo "usage: $0 --url URL" >&2; exit 2; }
	(cd "$dir" && A2A_URL="$2" node check.mjs)
	;;
"")
	DEVICECTL_A2A_JS=1 ${GO:-go} test -count=1 -run '^TestJSClients$' -v ./agent/a2a/
	;;
*)
	echo "usage: $0 [--install-only | --url URL]" >&2
	exit 2
	;;
esac
