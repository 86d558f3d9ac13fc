// Package completion sets up devicectl's shell completion: the values of every config flag that
// has a fixed set, the tools after call, and a clear error for a shell cobra has no script for.
package completion
