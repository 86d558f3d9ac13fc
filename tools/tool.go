package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/protocol"
)

// MainType says where a tool runs (the seed's main_type).
type MainType string

// The main types of the device protocol.
const (
	Remote MainType = "remote" // the device runs it: every tool a device declares
	Local  MainType = "local"  // the server runs it
)

// SubType says whether the server waits for a tool's result (the seed's sub_type).
type SubType string

// The sub types of the device protocol.
const (
	// Control changes the device; the server may answer the user without
	// waiting for the result.
	Control SubType = "control"
	// Query reads something; the server waits and hands the result to the
	// model.
	Query SubType = "query"
)

// Declaration is one entry of mcp/registerTools params.tools, exactly as on
// the wire.
type Declaration struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	MainType    MainType           `json:"main_type"`
	SubType     SubType            `json:"sub_type"`
	Parameters  *jsonschema.Schema `json:"parameters"`
}

// LocalQuery declares a tool the server runs itself and whose result the
// model waits for (main_type local, sub_type query), for Func to infer
// its Parameters.
func LocalQuery(name, description string) Declaration {
	return Declaration{Name: name, Description: description, MainType: Local, SubType: Query}
}

// Handler runs a tool. It is only ever called with input that validated
// against the tool's Parameters. A returned error is a domain failure
// (-32000 upstream) whose Error() is shown to a human: keep it concise.
// The result must marshal to JSON.
type Handler func(ctx context.Context, input json.RawMessage) (any, error)

// Tool is a Declaration plus what the device needs to run it.
type Tool struct {
	Declaration
	// Resources names the hardware the call drives (e.g. "speaker"). Calls
	// that share a resource never overlap.
	Resources []string
	// Timeout bounds one call; 0 means the caller's default.
	Timeout time.Duration
	// Relative says that each call changes the device relative to its
	// state (volume_up, not set_volume), so every call counts. A device may
	// skip a control call that waits for its hardware when a later call to
	// the same tool supersedes it (docs/protocol.md, "Concurrency and order");
	// it never skips a call of a Relative tool.
	Relative bool
	// Inline says the handler returns at once: it only touches memory, never does I/O or waits
	// (a simulated part). A device may run such a call on the goroutine that received it, as it
	// runs any call with nothing ahead of it, but without watching how long it takes and without
	// a deadline in its context. A handler that can block must leave it false, or it holds up
	// every call behind it.
	Inline bool
	// Handler is only ever called with input that validated against
	// Parameters.
	Handler Handler
}

// Invoke runs the handler. It neither validates the input nor recovers from
// panics: the caller does both (see Registry.Validate). Prepared.Invoke is
// the same for input Registry.Prepare validated.
func (t *Tool) Invoke(ctx context.Context, input json.RawMessage) (any, error) {
	return t.Handler(ctx, input)
}

// check reports everything wrong with the declaration's own fields (not its
// schema), as one error that does not name the tool: callers add that.
func (d *Declaration) check() error {
	var problems []string
	if !protocol.ValidToolName(d.Name) {
		problems = append(problems, fmt.Sprintf("name %q does not match %s", d.Name, protocol.ToolNamePattern))
	}
	if strings.TrimSpace(d.Description) == "" {
		problems = append(problems, "description is empty (the server's model decides when to call a tool from it)")
	}
	switch d.MainType {
	case Remote, Local:
	default:
		problems = append(problems, fmt.Sprintf("main_type %q is not %q or %q", d.MainType, Remote, Local))
	}
	switch d.SubType {
	case Control, Query:
	default:
		problems = append(problems, fmt.Sprintf("sub_type %q is not %q or %q", d.SubType, Control, Query))
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}
