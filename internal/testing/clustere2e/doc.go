// Package clustere2e holds the end-to-end test of a cluster of serve nodes, process against
// process, as a deployment runs it: the devicectl binary `go build` makes, three `serve`
// processes on loopback ports sharing one database and a NATS server (started in the test's
// process from the nats-server module), 300 `swarm` devices spread over them with server.urls,
// and one `run` device with simulated hardware that prints what it is told.
//
// TestCluster sends A2A and seed 004 tasks to node 1 for devices on nodes 2 and 3, kills node 2
// with SIGKILL while tasks flow, and measures how long its devices take to register on the
// others (the target is under 5 s); it checks that every task got exactly one answer, that the
// tasks and a memory read the same from every node left, and that a reminder set on node 1 for
// a device on node 2, due after the kill, is said once, on the node the device moved to.
//
// The package has no code of its own outside its test.
package clustere2e
