// Package seedtask speaks seed 004's task routes from outside the server, as a client does:
// POST /tasks/send and /tasks/send/stream (JSON-RPC 2.0) and GET /tasks/{id}, and decodes their
// task in the seed's shape (lower-case states such as "completed", parts {"type","text"}). The
// tests of the agent server, of a cluster of serve processes and of the whole loop through the
// devicectl binary read seed tasks through it; A2A 1.0's answers have a2a-go's types.
//
// Decoding is strict where a client depends on the wire: an answer that is not JSON, a JSON-RPC
// error, a response that does not echo the request's id, or a GET that answers another task is an
// error, never an empty task.
package seedtask
