package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// An itemKey is one key of the mappings in a list such as toolsets.opentool. Exactly one of set,
// setList and setEntry is non-nil, as for a setting. P is a pointer to the item's struct: every
// pointer has one shape, so each helper below is compiled once, with short symbol names, where a
// struct parameter made one copy per item type, named after the whole struct (tens of KiB of the
// board binary).
type itemKey[P any] struct {
	key, usage, typ string
	get             func(P) string
	set             func(P, string) error
	setList         func(P, []string) error
	setEntry        func(P, string, string) error
}

// itemRow is an item key as the README's table shows it.
type itemRow struct{ key, def, usage string }

// itemsKey is a list of mappings, each read with keys, starting from def and checked with check
// (which returns the key at fault). Errors name the item: toolsets.opentool[2].url.
func itemsKey[T any](key, usage string, list func(*Config) *[]T, def func() T, check func(*T) (string, error), keys []itemKey[*T]) setting {
	return setting{key: key, usage: usage, typ: "list",
		get: func(c *Config) string { return countItems(len(*list(c))) },
		setItems: func(c *Config, n *yaml.Node) error {
			if read, err := listToRead(key, n); !read {
				return err
			}
			var items []T
			for i, it := range n.Content {
				it = resolveAlias(it)
				prefix := fmt.Sprintf("%s[%d]", key, i+1)
				if it.Kind != yaml.MappingNode {
					return &Error{Key: prefix, Line: it.Line, Err: fmt.Errorf("want a mapping, got %s", describe(it))}
				}
				item := def()
				if err := setItem(&item, it, prefix, keys); err != nil {
					return err
				}
				if k, err := check(&item); err != nil {
					return &Error{Key: prefix + "." + k, Line: it.Line, Err: err}
				}
				items = append(items, item)
			}
			*list(c) = items
			return nil
		},
		rows: func() []itemRow {
			d := def()
			rows := make([]itemRow, len(keys))
			for i, k := range keys {
				rows[i] = itemRow{key + "[]." + k.key, k.get(&d), k.usage}
			}
			return rows
		},
	}
}

// countItems is a list of mappings as --help and the README show its value: how many there are.
func countItems(n int) string {
	if n > 0 {
		return fmt.Sprintf("(%d)", n)
	}
	return "[]"
}

// listToRead tells whether a value of key is a list to read: null is not (the list keeps what it
// has), and a value that is neither null nor a list is refused.
func listToRead(key string, n *yaml.Node) (bool, error) {
	if isNull(n) {
		return false, nil
	}
	if n.Kind != yaml.SequenceNode {
		return false, &Error{Key: key, Line: n.Line, Err: fmt.Errorf("want a list of mappings, one per tool set, got %s", describe(n))}
	}
	return true, nil
}

func setItem[P any](item P, n *yaml.Node, prefix string, keys []itemKey[P]) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		key := prefix + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("duplicate key (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
		j := slices.IndexFunc(keys, func(ik itemKey[P]) bool { return ik.key == k.Value })
		if j < 0 {
			names := make([]string, len(keys))
			for i, ik := range keys {
				names[i] = ik.key
			}
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("unknown key (the keys are %s)", strings.Join(names, ", "))}
		}
		ik := keys[j]
		var err error
		switch {
		case isNull(v):
			continue
		case ik.setList != nil:
			if v.Kind != yaml.SequenceNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want a list, got %s", describe(v))}
			}
			var vals []string
			for _, e := range v.Content {
				if e = resolveAlias(e); e.Kind != yaml.ScalarNode || isNull(e) {
					return &Error{Key: key, Line: e.Line, Err: fmt.Errorf("want a list of single values, got %s in it", describe(e))}
				}
				vals = append(vals, e.Value)
			}
			err = ik.setList(item, vals)
		case ik.setEntry != nil:
			if v.Kind != yaml.MappingNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want name: value pairs, got %s", describe(v))}
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				ek, ev := v.Content[i], resolveAlias(v.Content[i+1])
				if ev.Kind != yaml.ScalarNode || isNull(ev) {
					return &Error{Key: key + "." + ek.Value, Line: ev.Line, Err: fmt.Errorf("want a single value, got %s", describe(ev))}
				}
				if err := ik.setEntry(item, ek.Value, ev.Value); err != nil {
					return &Error{Key: key + "." + ek.Value, Line: ev.Line, Err: err}
				}
			}
		default:
			if v.Kind != yaml.ScalarNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want a single value, got %s", describe(v))}
			}
			err = ik.set(item, v.Value)
		}
		if err != nil {
			return &Error{Key: key, Line: v.Line, Err: err}
		}
	}
	return nil
}

func itemString[P any](key, usage string, p func(P) *string, check func(string) (string, error)) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "string",
		get: func(t P) string { return *p(t) },
		set: func(t P, v string) error {
			if check != nil && v != "" {
				var err error
				if v, err = check(v); err != nil {
					return err
				}
			}
			*p(t) = v
			return nil
		},
	}
}

func itemDuration[P any](key, usage string, p func(P) *time.Duration) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "duration",
		get: func(t P) string { return (*p(t)).String() },
		set: func(t P, v string) error {
			d, err := parseDuration(v)
			if err == nil {
				*p(t) = d
			}
			return err
		},
	}
}

func itemList[P any](key, usage string, p func(P) *[]string) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "list",
		get: func(t P) string { return formatList(*p(t)) },
		setList: func(t P, items []string) error {
			for i, it := range items {
				if it == "" {
					return fmt.Errorf("item %d is empty", i+1)
				}
			}
			*p(t) = items
			return nil
		},
	}
}

func itemMap[P any](key, usage string, p func(P) *map[string]string, check func(string) (string, error)) itemKey[P] {
	return itemKey[P]{key: key, usage: usage, typ: "map",
		get: func(t P) string {
			m := *p(t)
			names := make([]string, 0, len(m))
			for n := range m {
				names = append(names, n)
			}
			slices.Sort(names)
			for i, n := range names {
				names[i] = n + ": " + m[n]
			}
			return "{" + strings.Join(names, ", ") + "}"
		},
		setEntry: func(t P, name, v string) error {
			if check != nil {
				var err error
				if v, err = check(v); err != nil {
					return err
				}
			}
			if *p(t) == nil {
				*p(t) = map[string]string{}
			}
			(*p(t))[name] = v
			return nil
		},
	}
}
