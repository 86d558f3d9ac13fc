#!/usr/bin/env bash
# Runs the tests as an ARM board runs them, under qemu-user: scripts/test-arm.sh arm|arm64.
#
# A package that fails is run once more, alone, and only a second failure fails the run.
# qemu-user can deadlock a guest process that forks while it has other threads running: the
# forked child hangs in a futex before it execs (seen in CI: a daemon test's hook never started,
# the child left behind with PPID 1, two threads in futex_wait). That is the emulator, not the
# code under test, which runs native in make test; a real failure fails twice and still fails.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
case "${1:-}" in
arm)
	export GOARCH=arm GOARM=6
	emu='qemu-arm-static -cpu arm1176'
	;;
arm64)
	export GOARCH=arm64
	emu='qemu-aarch64-static'
	;;
*)
	echo "usage: $0 arm|arm64" >&2
	exit 2
	;;
esac
# The emulator again, for the tests that start a copy of their own binary.
export DEVICECTL_TEST_EXEC="$emu"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The slowest package takes about 2.5 minutes under qemu on a busy 2-core machine; 5 minutes
# bounds what such a deadlock costs before the run again (go test's default would wait 10).
if "$GO" test -count=1 -timeout 5m -exec "$emu" ./... 2>&1 | tee "$out"; then
	exit 0
fi
mapfile -t failed < <(awk '$1 == "FAIL" && $2 ~ /^github.com\// { print $2 }' "$out" | sort -u)
if [ ${#failed[@]} -eq 0 ]; then
	echo "test-arm ($1): go test failed without naming a package" >&2
	exit 1
fi
echo "test-arm ($1): running again, once, what failed under qemu: ${failed[*]}" >&2
"$GO" test -count=1 -p 1 -exec "$emu" "${failed[@]}"
