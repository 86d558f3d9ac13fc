// Package benchserve holds the agent server's process-level benchmarks: `devicectl serve` in one
// process, `devicectl swarm` (simulated devices, and with --talk the load generator) in another,
// both the binary `go build` makes of cmd/devicectl, on this machine, with each other's CPU
// competing as it would in the field.
//
//   - BenchmarkServeTasks: 100 swarm devices and seed tasks/send at a rate above what serve
//     answers (open loop), with 8, 64 and 256 callers in flight: tasks completed a second, and
//     serve's CPU per task (utime+stime from /proc/PID/stat over the measured window, divided by
//     the tasks completed in it), measured between two status lines of the swarm after a
//     warm-up; then A2A 1.0 SendMessage on /a2a at 8 callers, for comparison.
//   - BenchmarkServeRSSPerDevice: serve's resident set (VmRSS) idle, with 1,000 devices
//     registered and, when the machine has the memory and open files for it, with 16,000; per
//     device is the growth over idle divided by the devices.
//
// With BENCHSERVE_PROFILE=DIR, serve is built with its profiling hook (cmd/devicectl's
// devicectl_pprof tag) and DIR gets its CPU profile over each measured window of
// BenchmarkServeTasks, and heap and goroutine profiles and runtime.MemStats where
// BenchmarkServeRSSPerDevice reads RSS: `go tool pprof DIR/cpu-seed-64.pprof`.
//
// The package has no code of its own outside its tests; `make bench` runs them and
// scripts/bench.sh prints their figures beside docs/design.md's targets.
package benchserve
