// Package a2a is the agent's HTTP front door: other agents and scripts talk to the robot through
// it, in A2A 1.0, A2A 0.3 or seed 004's own task routes. It is one http.Handler; the serve
// command mounts it on its address next to the device hub, whose WebSocket upgrades take every
// path the handler does not serve (see Handler.Handles).
//
// It drives the agent only through Runner (Turn and Tools), which *agent.Agent satisfies, and
// every turn through one path: a2a-go's request handler (a2asrv) and its AgentExecutor
// (executor.go). The seed routes are a shape adapter over that handler (seed.go): they read the
// JSON-RPC envelope with the A2A paths' reader (envelope.go), turn the seed's request into a
// SendMessage, SendStreamingMessage, GetTask or CancelTask call, and its answer or events back
// into the seed's shapes (seed_view.go).
//
// # Routes
//
//	GET  /.well-known/agent-card.json  A2A card, open: 1.0 and 0.3 in one document (a2av0's union
//	                                   format); skills = "general" plus the tools a turn may use now
//	POST /a2a                          A2A 1.0 JSON-RPC (a2a-go v2): SendMessage, SendStreamingMessage
//	                                   (SSE), GetTask, ListTasks, CancelTask, ...
//	POST /a2a/v0.3                     A2A 0.3 JSON-RPC (a2a-go's a2acompat/a2av0): message/send,
//	                                   message/stream (SSE), tasks/get, tasks/cancel, ...
//	GET  /agent-card                   seed 004's card: {name, description, url, version, skills}
//	POST /tasks/send                   seed 004: tasks/send, answered once the turn is over; the
//	                                   same endpoint answers tasks/get and tasks/cancel ({"id"})
//	POST /tasks/send/stream            seed 004: tasks/send/stream as SSE: "event: status" working
//	                                   at once, "event: artifact" per reply piece (index, append,
//	                                   lastChunk), "event: status" with the end state, "final": true
//	GET  /tasks/{id}                   seed 004: the bare task object
//
// Which protocol version a client speaks is chosen by the card, not negotiated per request: the
// card lists a 1.0 interface at /a2a and a 0.3 one at /a2a/v0.3, and carries the 0.3 fields
// (url = the 0.3 interface, protocolVersion "0.3") next to the 1.0 ones. A 1.0 client (a2a-go's
// a2aclient, @a2a-js/sdk 1.x's ClientFactory) picks the 1.0 interface from supportedInterfaces; a
// 0.3 client (@a2a-js/sdk 0.3's A2AClient) posts to url.
//
// # Turns
//
// A message's text parts that are not blank, joined, are the turn's text; metadata.mac picks the
// device and metadata.user_id the user (the message's metadata first, then the request's; A2A's
// contextId and the seed's sessionId are the session). The reply streams as one artifact, a
// chunk per update, then the task completes with the whole reply as its status message, or
// fails with the turn's error as the message; tasks/cancel stops the turn and the task ends
// canceled ("The task was canceled"). input-required is never used: the planners do not ask
// back, so on the A2A paths a message that continues a finished task is
// UnsupportedOperationError (-32004); seed 004 lets it add a turn to the task.
//
// The handler waits for a turn's first event before it creates the task, so that a turn the agent
// refuses for want of a device (agent.ErrNoDevice, *agent.DeviceChoiceError) is a -32602 error
// that lists the registered MACs, and one past the turn limit (agent.ErrTurnLimit) a -32603 with
// details, not a failed task. *agent.Agent accepts or refuses at once (agent.EventStarted), so a
// streaming caller has its task and "working" before the planner's first word, however long a
// model takes to it. The seed routes name their tasks, which a2a-go cannot create under a given
// id, and let a finished task take another message, which a2a-go refuses: they store the task
// working with the message first (its reply moved into its history), and a tasks/send the agent
// refuses gets the same error with the task put back as it was.
//
// Turns are bounded by the agent (agent.Options.MaxTurns, agent.limits.turns, every front door
// together), which gives a turn's slot back before its answer goes out, and, at twice the
// number, a2a-go's executions by its limiter, which refuses a message before a2a-go sets
// anything up for it but lets go of an execution only after its caller has the answer (at the
// same number, a caller that sends again at once could be refused for its own finished turn);
// both answer -32603 with the same details.
//
// # The seed stream
//
// POST /tasks/send/stream does not wait: its headers and the working status go out once a2a-go
// has taken the message, before the planner has said anything, so a refusal for want of a device
// ends that task failed, the registered MACs as its status message. The reply streams into the
// artifact the task will hold, in the seed's shape plus the fields of the A2A draft it comes
// from: {"parts":[...],"index":N,"append":bool,"lastChunk":bool}. index is the artifact's place
// in the task's artifacts; append false starts its text (or replaces it), true adds to it; the
// piece with lastChunk true ends it, and the text put together is the task's final reply. Chunks
// go out as they come, so the closing piece is the final's rest (often ""), or the whole final
// when it is not the chunks joined. A failed or canceled turn ends with its status and no
// lastChunk: the artifact is not kept.
//
// # Errors
//
// The seed routes answer seed 004's table: -32700 "Invalid JSON payload", -32600 "Request
// payload validation error", -32601 "Method not found", -32602 "Invalid parameters", -32603
// "Internal error", with data.details naming the problem ("Missing required parameter: message",
// "Unknown task id: x", the registered MACs, ...), mapped from a2a-go's errors in one place
// (seedError, errors.go): what the two doors refuse alike (a request that is not JSON-RPC 2.0,
// no such device, past the turn limit, an unknown task, a busy one) they refuse with the same
// details. Unknown task ids are -32602 (404 on GET). On
// the A2A paths the protocol's codes apply (an unknown task is -32001 there) and a2a-go writes
// data as a list of typed details: the first, a google.protobuf.Struct, carries the same
// {"details": ...}. Every answer there is application/json. A JSON-RPC notification (no id
// member) is not run and gets 204 with no body: JSON-RPC 2.0 forbids an answer, every A2A method
// answers something, and a turn nobody hears would only cost. A body that is not UTF-8 is not
// JSON (RFC 8259) and its id could not be echoed: -32700 with id null.
//
// # Push notifications
//
// A2A push notifications are on (capabilities.pushNotifications): a client registers a receiver
// for a task (CreateTaskPushNotificationConfig, 0.3 tasks/pushNotificationConfig/set) and a2a-go
// posts the task's later events to it; Handler.Notify sends it a status update carrying a text
// from the agent, which the server uses when a reminder set during the task comes due (the turn
// knows its task as agent.Request.TaskID). The registrations are kept in memory, not in the
// database: they are lost on restart, and a client registers again. A receiver is any URL the
// client names: with Options.Token set, only holders of the token can register one.
//
// # ListTasks
//
// As a2a.proto's ListTasksRequest says: the tasks most recently updated first; pageSize 1 to 100,
// unset 50 (an explicit 0 is below the minimum); pageToken is the previous page's nextPageToken
// and names that page's last task, so that tasks arriving meanwhile do not shift the pages;
// contextId, status and statusTimestampAfter (the status's timestamp, at or after, RFC 3339)
// filter; historyLength (0 or more) trims each history; artifacts only with includeArtifacts. A
// status of "UNRECOGNIZED", which @a2a-js/sdk 1.x sends when given none, or
// TASK_STATE_UNSPECIFIED filters nothing. An empty list is [], a bad parameter -32602 with
// details.
//
// # Tasks and credentials
//
// Tasks of both kinds are kept in one table of the agent's database given as Options.DB
// (agent/store: SQLite, or PostgreSQL; a2a_tasks, as A2A tasks: a seed task is a view of one),
// behind one store (taskStore, the a2a-go task store a2a-go's handler drives), so they survive a
// restart and either door reads the other's. Each task is stored with the node that runs it
// (Options.Cluster's name for it, else an id of the process's): a node that starts marks failed the
// tasks left submitted or working by its own name and by the nodes that do not run (without a
// cluster, every other), and in a cluster those of a node found gone later; the node that ran such
// a task, if it was only cut off, cannot write it back. A SQLite database from before the seed
// routes shared the table has their table (a2a_seed_tasks) moved into it at start (versioned
// through store.DB.Migrate, component "a2a"). A task is written when its state changes, not per
// piece of its reply: the pieces of a running task are merged in memory, where GetTask and
// ListTasks read them, and stored with the next state (a seed tasks/send, whose caller waits for
// the outcome, has its reply stored once, whole). A status is stamped with the time it is stored at
// when it has none: the seed routes' statuses, whose times are Options.Now's, read once per state
// change. Writes go through the database's writer (on SQLite one connection) with statements
// prepared once, so that concurrent tasks queue in Go rather than spin on SQLITE_BUSY. SQLite is in
// WAL mode with synchronous=NORMAL: a crash of the process loses nothing written, a power cut the
// last writes before SQLite's checkpoint (a task may then read as it was a state earlier, or be
// missing), never the file; docs/storage.md has both databases. A message's text is at most
// Options.MessageBytes, checked before anything is stored for it, and a task's history
// Options.TaskHistory messages (a seed send, the only one to add a turn to a task, adds two: the
// message, the reply): past either, -32600 naming the limit. Close ends the turns still running
// failed ("The server is shutting down") and returns once they are stored. Finished tasks
// (completed, canceled, failed) are deleted past Options.TasksKeepAge and, oldest first, past
// Options.TasksKeepCount (down to a percent under it, so that a full table deletes in batches),
// checked as tasks are created (the age at most once a minute); a running task never is. With
// Options.Token set, every route but the two cards requires "Authorization: Bearer <token>" and
// answers 401 otherwise. The card does not declare the scheme: a2a-go v2.3.1's 1.0 card parser
// cannot read a union card that has security schemes.
package a2a
