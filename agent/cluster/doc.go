// Package cluster makes several `devicectl serve` nodes one agent server, over NATS
// (github.com/nats-io/nats.go): agent.cluster.nats. It is the hub's hub.Cluster: package
// agent/hub keeps the device lines and their rules, and asks this package only what the other
// nodes hold and how to reach them. A node without it runs as a single node, with nothing to
// install.
//
// # Who holds a MAC
//
// A device is on one node's line. Which node holds which MAC is in a JetStream key-value bucket,
// NAME_devices (agent.cluster.name, "devicectl" by default), one key per MAC whose value names
// the node, when the device registered, its address and the SHA-256 of its tool declarations.
// The declarations themselves are in NAME_tools under that sum, written once for a fleet that
// declares the same tools. Both buckets keep a value for the bucket's TTL (agent.cluster.ttl,
// 15 s by default) after it was last written; a node rewrites its holds every third of it while
// their lines live, so a node that dies, or is cut off from NATS, loses its holds within the
// TTL, and every node's watch of the bucket sees them go (the bucket's limit markers).
//
// A registration claims its MAC (Claim) with compare-and-set writes, so that two nodes never
// both win it. When another node holds the MAC, it is asked first, by request and reply on
// NAME.node.NODE.claim, and applies hub's rules (hub.Node.Yield): a live line of another client
// keeps the MAC, and the registration is refused with what a single node would answer; a line of
// the same device is closed; a node without a live line for it gives it up. A node that is gone
// has no subscriber left on its subject, so NATS answers "no responders" at once and the MAC is
// taken over at once: a dead node's devices register on the others as fast as they reconnect,
// without waiting for the TTL. A line's end deletes its hold (compare-and-set: a newer hold is
// kept).
//
// # What the other nodes' devices look like
//
// Every node watches NAME_devices and tells its hub of the devices other nodes hold
// (hub.Node.Remote), fetching their tools from NAME_tools; the hub lists them with its own and
// publishes their registrations, tool changes and departures to its subscribers. So the device
// list, the agent card's skills, the MCP server's tools and list_changed, the web page and the
// console are the whole cluster's. A node whose hold is written over by another while its line
// lives (it was cut off for longer than the TTL and the device registered elsewhere) closes the
// line (hub.Node.Lost).
//
// # Reaching a device on another node
//
// A turn runs on the node it started on; its tool calls and messages go to the device's node by
// request and reply on NAME.node.NODE.call and .send. A call carries what is left of the
// caller's deadline; the answer is the device's result, or its JSON-RPC error with code, message
// and data as sent, or "gone" (the device left that node, or the node is gone: no responders),
// which the calling hub returns as hub.ErrGone, as it does for a line of its own that drops.
// At most MaxRemoteCalls calls from other nodes run on a node at once; one more is answered
// -32002. Messages to one device are written in the order they came. The node that runs a call
// publishes it (hub.CallDone) on NAME.events.NODE, and what a person said to a device
// (hub.Heard), so every node's web page shows every call.
//
// # What NATS holding nothing else means
//
// NATS keeps only who holds what and carries requests: the tasks, memories, reminders and device
// bindings are in the database the nodes share (agent.store). When NATS is unreachable, the
// lines a node has keep serving turns that start on that node; a registration is refused
// (-32603, the device retries after its back-off), a call to another node's device fails, and
// once NATS is back every node renews its holds, taking back those that expired meanwhile.
package cluster
