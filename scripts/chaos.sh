#!/usr/bin/env bash
# The chaos suite (internal/testing/chaos): a real agent against a hostile stand-in server on loopback,
# under the race detector, for CHAOS_TIME on each kind of tool (ones that may block, then instant
# ones; default here 30s; `go test ./...` runs it for 8s), then the 100,000-call memory test. The run prints its seed and a summary line; a failing run names its
# violations. Loopback only, bounded in time: it stops by itself.
#
#   CHAOS_TIME=2m     how long to inject faults (Go duration: 30s, 5m, 1h)
#   CHAOS_SEED=123    replay the sequence of actions of an earlier run (timing still varies)
#   CHAOS_CALLS=1_000_000  calls the memory test makes (default 100000; at least 1000)
#   CHAOS_LOG=debug   the agent's logs on stderr (debug, info, warn, error)
#   CHAOS_FUZZTIME=60s  then fuzz FuzzDispatch for that long (default: no fuzzing; `make fuzz`
#                       fuzzes it too, with every other target)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
export CHAOS_TIME=${CHAOS_TIME:-30s}

# go test's own deadline: the two runs, plus time for the memory test and the wind-down. A
# duration this cannot read (1m30s) leaves go test without one; the tests bound their own waits.
timeout=0
if [[ $CHAOS_TIME =~ ^([0-9]+)([smh])$ ]]; then
	n=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]} in
	s) timeout=$((2 * n + 600))s ;;
	m) timeout=$((2 * n * 60 + 600))s ;;
	h) timeout=$((2 * n * 3600 + 600))s ;;
	esac
fi

"$GO" test -race -count=1 -v -timeout "$timeout" -run '^TestChaos' ./internal/testing/chaos

if [ -n "${CHAOS_FUZZTIME:-}" ]; then
	"$GO" test -run '^$' -fuzz '^FuzzDispatch$' -fuzztime "$CHAOS_FUZZTIME" ./internal/testing/chaos
fi
