package localtools

import (
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/tools"
)

// Options configures the local tools. A nil *Options is the zero value.
type Options struct {
	// Search answers search_web; nil means no backend is configured, and
	// search_web then answers every call with an error saying how to
	// configure one (it never invents results).
	Search Backend
	// Logger receives a debug line per search; nil logs nothing.
	Logger *slog.Logger
}

// Names of the tools Register adds.
const (
	ToolCalculate = "calculate"
	ToolGuide     = "guide_user_detail"
	ToolSplit     = "split_query_to_dimension"
	ToolSearch    = "search_web"
)

// Register adds calculate, guide_user_detail, split_query_to_dimension and
// search_web to r, all main_type local and sub_type query. It adds none of
// them if one of the names is already taken.
func Register(r *tools.Registry, o *Options) error {
	if r == nil {
		return fmt.Errorf("localtools: nil registry")
	}
	var opts Options
	if o != nil {
		opts = *o // the caller's struct is never modified
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Logger = opts.Logger.With("component", "localtools")

	builders := []func() (*tools.Tool, error){
		calculateTool,
		guideTool,
		splitTool,
		func() (*tools.Tool, error) { return searchTool(opts.Search, opts.Logger) },
	}
	var ts []*tools.Tool
	for _, b := range builders {
		t, err := b()
		if err != nil {
			return fmt.Errorf("localtools: %w", err)
		}
		if _, taken := r.Lookup(t.Name); taken {
			return fmt.Errorf("localtools: tool %q is already registered", t.Name)
		}
		ts = append(ts, t)
	}
	for _, t := range ts {
		if err := r.Add(t); err != nil {
			return fmt.Errorf("localtools: %w", err)
		}
	}
	return nil
}
