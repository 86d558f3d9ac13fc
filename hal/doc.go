// Package hal is devicectl's hardware abstraction layer: small interfaces
// for the pieces of a device the agent server can drive, in the style of
// periph.io.
//
// Every piece of hardware is a Resource: it has a short name (String) and
// can be told to go inert (Halt). Halt is what the agent calls on shutdown
// and what a backend does on its own when it can no longer trust its state;
// it must be idempotent. Capabilities embed Resource and add one to three
// methods each:
//
//   - Speaker: set and read back a volume in percent (0..100).
//   - Face: show one of a fixed set of Expressions.
//   - Microphone: read 16 kHz mono 16-bit samples.
//
// Methods that may block (a bus transfer, an exec of amixer) take a
// context.Context. Values the hardware cannot accept are rejected with
// errors wrapping ErrOutOfRange or ErrUnknownExpression, so callers test
// them with errors.Is and can report a domain failure rather than a crash.
//
// This package imports nothing else of devicectl. Backends live in
// sub-packages: hal/sim keeps state in memory for laptops, hal/haltest has
// fakes for unit tests, and hal/faces holds the one drawing of each
// Expression that every display backend (terminal, SSD1306, ...) shows.
package hal
