// Package swarm runs many simulated devices in one process against an agent server, for people
// load-testing the server: `devicectl swarm`.
//
// Each device is what `devicectl run --hardware sim` is (its own MAC, speaker, face, tool
// registry and agent); the caller builds it, through Options.Build, from the hooks the swarm
// hands it. What the devices share is the process's logger and the swarm's counters, which it
// prints as a status line every Plan.Interval and as a summary when it stops.
//
// A Plan is a checked command line: how many devices, their MAC prefix, the ramp over which the
// first dials are spread, and the status interval. MACs are the prefix followed by the device's
// number, locally administered and the same on every run (see MAC); each device's Client-Id is a
// name-based UUID of its MAC (see ClientID).
//
// A Talk (NewTalk, Options.Talk) makes the swarm a load generator too: once every device has
// registered, it sends the server tasks over HTTP (seed 004's tasks/send or A2A 1.0's
// SendMessage), each naming one of its own devices in metadata.mac, round-robin. The schedule is
// open loop: tasks are due at the rate whatever the server does, at most Talk.Callers are in
// flight, and one due while every caller is busy is counted behind rather than queued, so a
// slow server shows as a rate short of the target, not as a slower schedule. The status lines
// and the summary add the tasks completed, their rate and p50/p90/p99 time (the same histogram
// as the calls'), and the failures by kind.
package swarm
