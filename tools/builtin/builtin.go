package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Options configures the built-in tools. The zero value is usable (see
// Register).
type Options struct {
	Speaker hal.Speaker // nil: no amplify_volume, and no volume in the status
	Face    hal.Face    // nil: no set_virtual_human_expression, and no expression in the status
	// Language of the descriptions the server's model reads and of the
	// result messages: "zh" (the default) or "en". A region suffix
	// ("zh-CN", "en_US") is accepted and ignored.
	Language string
	// Version is reported by get_device_status; "" reports "unknown".
	Version string
	// Start is when the device started, for uptime; zero means the time of
	// Register.
	Start time.Time
	// ConnState reports the connection state (e.g. "registered") for
	// get_device_status; nil reports "unknown". It is called on each status
	// query, from the tool's goroutine.
	ConnState func() string
	// Instant says that Speaker and Face return at once, never doing I/O or waiting (simulated
	// parts with no callbacks), and so does ConnState: the tools are then Inline (see
	// tools.Tool.Inline). Said here by whoever built the parts, not guessed from their types: a
	// wrapper around an instant part may well block.
	Instant bool
}

// Resource names the built-in tools declare (tools.Tool.Resources).
const (
	ResourceSpeaker = "speaker"
	ResourceFace    = "face"
)

// Names lists the tools Register adds for a device with every part, in the order it adds them,
// without building them: what a config may name (execution.tool_timeouts) before any part is
// open.
func Names() []string {
	return []string{protocol.ToolVolume, protocol.ToolExpression, protocol.ToolStatus}
}

// Register adds the built-in tools to r: amplify_volume when opts.Speaker
// is set, set_virtual_human_expression when opts.Face is set, and always
// get_device_status. It adds none of them if any name is already taken or
// the language is not supported. A nil opts is the zero Options.
func Register(r *tools.Registry, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts // the caller's struct is never modified
	}
	txt, err := catalog(o.Language)
	if err != nil {
		return err
	}
	if o.Version == "" {
		o.Version = "unknown"
	}
	if o.Start.IsZero() {
		o.Start = time.Now()
	}
	if o.ConnState == nil {
		o.ConnState = func() string { return "unknown" }
	}

	var ts []*tools.Tool
	if o.Speaker != nil {
		t, err := volumeTool(o.Speaker, txt)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	if o.Face != nil {
		t, err := expressionTool(o.Face, txt)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	t, err := statusTool(&o, txt)
	if err != nil {
		return err
	}
	ts = append(ts, t)

	for _, t := range ts {
		t.Inline = o.Instant
	}
	for _, t := range ts {
		if _, taken := r.Lookup(t.Name); taken {
			return fmt.Errorf("builtin: tool %q is already registered", t.Name)
		}
	}
	for _, t := range ts {
		if err := r.Add(t); err != nil {
			return fmt.Errorf("builtin: %w", err)
		}
	}
	return nil
}

// catalog returns the texts for a language.
func catalog(lang string) (*text, error) {
	primary, _, _ := strings.Cut(strings.ToLower(lang), "-")
	primary, _, _ = strings.Cut(primary, "_")
	switch primary {
	case "", "zh":
		return &zh, nil
	case "en":
		return &en, nil
	}
	return nil, fmt.Errorf("builtin: unsupported language %q (want \"zh\" or \"en\")", lang)
}

// failure is a tool's domain error: Error is the message for a human, in
// the device's language; Unwrap is the hardware's error, for logs and
// errors.Is.
type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

// fail words err with a catalog format whose one verb is the cause.
func fail(format string, err error) error {
	return &failure{msg: fmt.Sprintf(format, err.Error()), err: err}
}

// refuse is fail for refusals whose message says all (the cause is kept for
// errors.Is only).
func refuse(msg string, err error) error {
	return &failure{msg: msg, err: err}
}

// setAndRead is a control call: it sets v, then reads back what the
// hardware holds, which is what the answer reports (a mixer may round to its
// own steps). An error that is refused (errors.Is) is the hardware turning v
// down, answered with refusal; any other is worded with setFailed or
// readFailed.
func setAndRead[V any](ctx context.Context, v V, set func(context.Context, V) error, read func(context.Context) (V, error),
	refused error, refusal, setFailed, readFailed string) (V, error) {
	if err := set(ctx, v); err != nil {
		if errors.Is(err, refused) {
			return v, refuse(refusal, err)
		}
		return v, fail(setFailed, err)
	}
	got, err := read(ctx)
	if err != nil {
		return v, fail(readFailed, err)
	}
	return got, nil
}

// describe sets the description of a tool's parameter from the catalog,
// in the tool's language (struct tags cannot vary with it).
func describe(t *tools.Tool, property, description string) error {
	p := t.Parameters.Properties[property]
	if p == nil {
		return fmt.Errorf("builtin: tool %q has no parameter %q", t.Name, property)
	}
	p.Description = description
	return nil
}
