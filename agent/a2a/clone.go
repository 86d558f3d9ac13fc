package a2a

import (
	"maps"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// cloneTask is a deep copy of t: whoever gets it may change any part of it without changing t.
// The store hands out copies of the tasks it holds in memory on every read, several per turn,
// so this is done field by field rather than through an encoding (a JSON round trip was most of
// a read's time). Metadata values are copied as far as JSON values go (objects and
// arrays); any other value in them is shared, as values a2a-go and this package put there are
// not changed in place. TestCloneTaskFields fails when a2a-go's types gain a field.
func cloneTask(t *a2a.Task) *a2a.Task {
	if t == nil {
		return nil
	}
	c := *t
	c.Artifacts = cloneSlice(t.Artifacts, cloneArtifact)
	c.History = cloneSlice(t.History, cloneMessage)
	c.Metadata = cloneMeta(t.Metadata)
	c.Status.Message = cloneMessage(t.Status.Message)
	if t.Status.Timestamp != nil {
		at := *t.Status.Timestamp
		c.Status.Timestamp = &at
	}
	return &c
}

func cloneMessage(m *a2a.Message) *a2a.Message {
	if m == nil {
		return nil
	}
	c := *m
	c.Extensions = slices.Clone(m.Extensions)
	c.Metadata = cloneMeta(m.Metadata)
	c.Parts = cloneSlice(m.Parts, clonePart)
	c.ReferenceTasks = slices.Clone(m.ReferenceTasks)
	return &c
}

func cloneArtifact(a *a2a.Artifact) *a2a.Artifact {
	if a == nil {
		return nil
	}
	c := *a
	c.Extensions = slices.Clone(a.Extensions)
	c.Metadata = cloneMeta(a.Metadata)
	c.Parts = cloneSlice(a.Parts, clonePart)
	return &c
}

func clonePart(p *a2a.Part) *a2a.Part {
	if p == nil {
		return nil
	}
	c := *p
	c.Metadata = cloneMeta(p.Metadata)
	switch v := p.Content.(type) {
	case a2a.Raw:
		c.Content = a2a.Raw(slices.Clone([]byte(v)))
	case a2a.Data:
		c.Content = a2a.Data{Value: cloneValue(v.Value)}
	}
	return &c
}

// cloneSlice copies s and each element with clone; nil stays nil.
func cloneSlice[S ~[]*E, E any](s S, clone func(*E) *E) S {
	if s == nil {
		return nil
	}
	c := make(S, len(s))
	for i, e := range s {
		c[i] = clone(e)
	}
	return c
}

func cloneMeta(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := maps.Clone(m)
	for k, v := range c {
		switch v.(type) {
		case map[string]any, []any:
			c[k] = cloneValue(v)
		}
	}
	return c
}

// cloneValue copies a JSON value's objects and arrays; anything else is returned as is.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMeta(v)
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = cloneValue(e)
		}
		return c
	}
	return v
}
