//go:build !devicectl_omit_serve || !devicectl_omit_sim

// Package web is the agent server's web page: each connected device's face, volume, connection
// and uptime, a conversation box whose reply streams in, and a live log of the tool calls, for
// showing a robot on a screen or a phone. `devicectl sim --web` and `devicectl serve --web`
// mount it.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (static/); it fetches nothing
// from elsewhere. It learns everything from one Server-Sent Events stream (GET /web/events): a
// snapshot when it connects, then each change. What it says goes to the agent by POST /web/say;
// the turn's chunks, thoughts and tool calls come back on the stream, to every open page.
//
// With Options.Reminders set, each device's card lists its reminders and timers (what, when,
// once or how it repeats) with a Cancel button (POST /web/reminders/{id}/cancel), and an
// Announce button beside Send has the device say the text as it is (POST /web/announce, the
// announce tool's path) instead of starting a turn. The list is read from GET /web/reminders:
// every Options.RemindersEvery, at once after a tool call the page shows or a cancel, and just
// after the soonest is due; each device's answer holds at most 50, then a count of the rest.
//
// Where the data comes from:
//   - devices and their connection: the hub's Registered and Disconnected events;
//   - the tool log: the hub's CallDone events (every device call, whoever made it: the page, the
//     console, A2A) and, for the server's own tools, the page's turns;
//   - volume, face and uptime: the results of the device's get_device_status (read once when the
//     device registers, and whenever anyone asks) and the inputs of its amplify_volume and
//     set_virtual_human_expression calls that succeeded. A device without those tools shows none.
//   - the face image: GET /web/face/{expression}.png, drawn by hal/faces.Draw, the same drawing as
//     the OLED and the terminal.
//
// What it keeps: each call's input, result and error cut to Options.CallBytes
// (agent.limits.web_call_bytes; a marker says how long it was), Options.Calls calls per device
// (agent.limits.web_calls), the last 64 devices that disconnected and their calls, the last 50
// exchanges. So a page's snapshot is bounded, however large a device's answers. A page that
// stops reading is dropped once it falls 256 events or about a megabyte behind, even while a
// write to it is stuck; its EventSource reconnects and starts from a fresh snapshot.
//
// Access: with Options.Token set, the page's data (the event stream, what is said) needs the
// token, once: the page sends it as a bearer token to POST /web/session and gets an HttpOnly,
// SameSite=Strict cookie derived from it. Until then the page says it is locked and asks for the
// token, and shows none of its sections: an empty device list or a box to say something would
// be untrue of a page that may not listen. Without a token the page answers only requests whose
// Host is a loopback name, so another site cannot reach it by DNS rebinding. POSTs from another
// origin are refused (http.CrossOriginProtection).
package web
