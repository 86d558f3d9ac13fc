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
package swarm
