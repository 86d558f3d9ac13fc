// Package netfault holds a test, and only a test, of the devicectl binary on a real network that
// fails: the unit tests drive the agent over loopback and in-memory transports with injected
// clocks, which cannot show what the kernel's TCP does to a line that vanishes, stalls or loses
// packets, nor that the keepalive and back-off settings of the real daemon add up.
//
// # What it does
//
// TestNetworkFaults builds devicectl, creates a network namespace joined to the host by a veth
// pair on a private /30 (10.200.x.y), runs the stand-in server (`devicectl serve`) inside the
// namespace and the device (`devicectl run --hardware sim`) on the host, with a short ping
// timeout and back-off. Then it breaks the line, in order:
//
//	delay_and_loss  tc netem on the namespace's side (delay 100ms, loss 10%): every call is
//	                answered, and the device ran each exactly once
//	partition       the namespace's side of the veth down for longer than ping interval + ping
//	                timeout: the device notices by its keepalive, backs off, keeps dialling, and
//	                registers again within the bound once the link is up
//	server_hang     the server frozen (SIGSTOP) while its kernel still answers TCP: the device
//	                notices by its keepalive, gives up dials at the handshake timeout, and
//	                registers again within the bound after SIGCONT
//	server_restart  the server stopped (SIGTERM), the device refused for a while, started again
//	server_crash    the same with SIGKILL: no close frame, the kernel closes the line
//
// and checks, after all of them, that a final call is answered by the same process (its uptime
// covers the whole run), that every back-off wait stayed within backoff_min..backoff_max, that
// nothing was answered twice, and that SIGTERM stops the device with exit status 0. The recovery
// times are printed (go test -v). Under -race the device is built with -race too, so a data race
// the faults provoke fails its exit status.
//
// # Where it runs
//
// It is opt-in: it runs only with DEVICECTL_NETFAULT=1 (scripts/netfault.sh and make netfault
// set it, and CI sets it for make test), so that `go test ./...` as anyone types it, even as
// root, creates no namespace; without the variable it skips at once and says how to run it.
// With the variable set it needs Linux, root (CAP_NET_ADMIN and CAP_SYS_ADMIN for ip netns),
// iproute2 (ip, and tc for the netem part) and about 20 s (30 s on a loaded machine); a missing
// requirement then fails the test, so CI cannot lose it to a silent skip. -short still skips it.
// A kernel without the sch_netem qdisc skips only delay_and_loss, always: loss is not faked in
// userspace, which would test something else.
//
// DEVICECTL_NETFAULT_BIN names a devicectl binary to use instead of building one, so that
// scripts/netfault.sh can build as the user and run only the test as root.
//
// Everything it creates (namespace, veth pair, processes) is removed when the test ends, even
// when it fails; a namespace left behind by a test binary that was killed is removed by the
// next run.
package netfault
