//go:build !devicectl_omit_serve || !devicectl_omit_sim

// Package server builds the agent server of `devicectl serve` and `devicectl sim` from the
// configuration: the device hub, the agent with its planner (the rule planner or an
// OpenAI-compatible endpoint), its local tools (seed 004's, and memory in the agent's database:
// agent.db in the state directory, or the PostgreSQL database agent.store names, opened once by
// agent/store.Open and shared by the memory, the reminders, the device bindings and the tasks),
// the A2A and seed 004 routes, and the one HTTP handler that serves them all on one
// address, a WebSocket upgrade on any path going to the hub. It also adapts the server to the
// console (internal/console).
//
// The board binaries leave it out with serve and sim (devicectl_omit_serve, devicectl_omit_sim):
// nothing a device links imports it.
package server
