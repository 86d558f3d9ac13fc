package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/devicectl/devicectl/tools"
)

// toolset is the tools one registration declared: the declarations as sent, and a registry that
// holds their resolved schemas for Validate. Devices that declare byte-identical tools (a fleet of
// one model) share one toolset, so a thousand of them hold one copy of the schemas.
type toolset struct {
	key   string // the registration's raw params.tools
	decls []tools.Declaration
	reg   *tools.Registry
	refs  int // registrations using it; guarded by Hub.mu
}

// errNotRun is the handler of a device tool held by the hub: the hub only validates against the
// schema, the device runs the tool.
var errNotRun = errors.New("hub: a device tool runs on the device")

func notRun(context.Context, json.RawMessage) (any, error) { return nil, errNotRun }

// newToolset checks a registration's tools with the tools package: names, descriptions, types,
// duplicates and schemas. Every failure is an error whose text goes to the device as
// data.details.
func newToolset(raw json.RawMessage) (*toolset, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("tools is required (an array of tool declarations)")
	}
	var decls []tools.Declaration
	if err := json.Unmarshal(raw, &decls); err != nil {
		return nil, fmt.Errorf("tools is not an array of tool declarations: %v", err)
	}
	reg := tools.NewRegistry()
	var problems []string
	for i := range decls {
		d := decls[i]
		if err := reg.Add(&tools.Tool{Declaration: d, Handler: notRun}); err != nil {
			problems = append(problems, fmt.Sprintf("tools[%d]: %s", i, strings.TrimPrefix(err.Error(), "tools: ")))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return &toolset{key: string(raw), decls: decls, reg: reg}, nil
}

// declarations returns a copy of the slice; the schemas are shared and must not be modified.
func (t *toolset) declarations() []tools.Declaration {
	if t == nil {
		return nil
	}
	return append([]tools.Declaration(nil), t.decls...)
}
