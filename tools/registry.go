package tools

import (
	"fmt"
	"sync"
)

// Registry holds the tools a device declares and serves. Add tools during
// setup; after that, every method is safe for concurrent use (Add is too,
// but a tool added after registration is only declared on the next one).
//
// The registry does not copy a Tool: do not modify one after Add. The
// schema used for validation is a private copy, so a later change cannot
// corrupt validation, but it would make the declaration on the wire
// disagree with what is enforced.
type Registry struct {
	mu     sync.RWMutex
	order  []*entry
	byName map[string]*entry
}

// entry is a registered tool with its resolved schema.
type entry struct {
	tool   *Tool
	schema *parameters
	quick  *quickCheck // nil: the parameters need the full validation
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: make(map[string]*entry)}
}

// Add registers t. It rejects, with an error naming the tool and the
// problem: an invalid name (^[a-zA-Z0-9_-]{1,64}$), an empty description, a
// main_type or sub_type outside the protocol's enums, parameters that are
// missing, not of type "object", do not resolve or could not be validated
// (see the package documentation), an empty resource name, a negative
// timeout, a nil handler, and a name already registered.
func (r *Registry) Add(t *Tool) error {
	if t == nil {
		return fmt.Errorf("tools: Add(nil)")
	}
	rs, err := checkTool(t)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[t.Name]; dup {
		return fmt.Errorf("tools: tool %q: already registered", t.Name)
	}
	e := &entry{tool: t, schema: rs, quick: compileQuick(rs.Schema())}
	r.order = append(r.order, e)
	r.byName[t.Name] = e
	return nil
}

// checkTool reports what is wrong with t; it is shared by Add and Func so
// that an invalid definition fails as early as possible.
func checkTool(t *Tool) (*parameters, error) {
	if err := t.Declaration.check(); err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", t.Name, err)
	}
	if t.Handler == nil {
		return nil, fmt.Errorf("tools: tool %q: handler is nil", t.Name)
	}
	for _, res := range t.Resources {
		if res == "" {
			return nil, fmt.Errorf("tools: tool %q: empty resource name", t.Name)
		}
	}
	if t.Timeout < 0 {
		return nil, fmt.Errorf("tools: tool %q: negative timeout %v", t.Name, t.Timeout)
	}
	rs, err := resolve(t.Parameters)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", t.Name, err)
	}
	return rs, nil
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	e := r.lookup(name)
	if e == nil {
		return nil, false
	}
	return e.tool, true
}

func (r *Registry) lookup(name string) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// Tools returns the registered tools in registration order. The slice is
// the caller's; the tools are shared.
func (r *Registry) Tools() []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ts := make([]*Tool, len(r.order))
	for i, e := range r.order {
		ts[i] = e.tool
	}
	return ts
}

// Declarations returns what mcp/registerTools declares, in registration
// order. Each Parameters is a fresh copy (jsonschema.Schema.CloneSchemas),
// so a caller may adjust it without affecting the registry.
func (r *Registry) Declarations() []Declaration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ds := make([]Declaration, len(r.order))
	for i, e := range r.order {
		ds[i] = e.tool.Declaration
		ds[i].Parameters = e.tool.Parameters.CloneSchemas()
	}
	return ds
}
