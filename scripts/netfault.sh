#!/usr/bin/env bash
# The network-fault test (internal/testing/netfault): the device against the stand-in server across a
# veth pair into a network namespace, with the link taken down, the server frozen, stopped and
# crashed, and netem delay and loss where the kernel has sch_netem. Creating the namespace needs
# root, so the binaries are built as the caller (in the caller's Go cache, which root must not
# fill with files the caller cannot remove) and only the test binary runs under sudo.
#
# DEVICECTL_NETFAULT=1 is set: a machine that cannot run the test fails it instead of skipping.
# A kernel without sch_netem still skips the delay_and_loss part alone, and says so.
# Extra arguments go to the test binary, e.g. scripts/netfault.sh -test.run 'TestNetworkFaults/partition'.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# -race on both: a data race the faults provoke in the device fails its exit status.
"$GO" build -race -o "$out/devicectl" ./cmd/devicectl
"$GO" test -race -c -o "$out/netfault.test" ./internal/testing/netfault

sudo=()
if [ "$(id -u)" != 0 ]; then
	sudo=(sudo)
fi
# The test runs in its package's directory, as go test would run it.
cd internal/testing/netfault
"${sudo[@]}" env PATH="$PATH" DEVICECTL_NETFAULT=1 DEVICECTL_NETFAULT_BIN="$out/devicectl" \
	"$out/netfault.test" -test.v -test.count=1 -test.timeout=3m "$@"
