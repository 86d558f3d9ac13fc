package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/devicectl/devicectl/internal/safefile"
)

// DefaultPath is read when --config is not given, but only if it exists: a device without a
// config file runs on defaults and flags.
const DefaultPath = "/etc/devicectl/devicectl.yaml"

// MaxFileSize is the largest config file read. A config is a few KiB; the cap keeps a path that
// leads to something else (a log, /dev/zero) from filling the memory.
const MaxFileSize = 1 << 20

// MaxAliasNodes bounds how many nodes YAML aliases may add to a config document once expanded.
// Aliases let a small file stand for a huge one (a "billion laughs" bomb); a real config
// repeats a few blocks, a few hundred nodes at most.
const MaxAliasNodes = 10000

// lookupSetting returns the setting with the dotted key, nil if there is none.
func lookupSetting(key string) *setting {
	for i := range settings {
		if settings[i].key == key {
			return &settings[i]
		}
	}
	return nil
}

// isSection reports whether key is a section of the file (a prefix of some setting's key).
// ignoredSections are sections a build reads past without looking inside (see agent_board.go).
var ignoredSections []string

func isSection(key string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.key, key+".") {
			return true
		}
	}
	return false
}

// Error is a bad configuration value or flag: devicectl exits 2 and prints it. Key is the
// file key ("connection.ping_interval") or the flag ("--ping-interval"); empty for a file that is
// not YAML at all.
type Error struct {
	Key  string
	Line int // line in the config file; 0 for flags and checks across keys
	Err  error
}

func (e *Error) Error() string {
	if e.Key == "" {
		return e.Err.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s: %v (line %d)", e.Key, e.Err, e.Line)
	}
	return fmt.Sprintf("%s: %v", e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Load returns the defaults overlaid with the file at path. With path "" it reads
// DefaultPath when that exists. An error about the content names the file, and wraps a
// *Error naming the key.
func Load(path string) (*Config, error) {
	c := Defaults()
	if path == "" {
		if _, err := os.Stat(DefaultPath); errors.Is(err, fs.ErrNotExist) {
			return c, nil
		}
		path = DefaultPath
	}
	if err := LoadFile(path, c); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadFile overlays the config file at path onto c. The file must be a regular file of at most
// MaxFileSize bytes: a FIFO, a directory or a device is refused at once, without waiting for a
// writer or reading a byte. An error about the content names the file, and wraps a *Error naming
// the key.
func LoadFile(path string, c *Config) error {
	data, err := safefile.ReadFile(path, MaxFileSize)
	if err != nil {
		return &Error{Key: "--config", Err: err}
	}
	if err := Parse(data, c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Parse overlays the YAML document data onto c. It is strict: an unknown or duplicate key,
// a mapping where a value belongs, or a bad value is an error naming the key and its line.
func Parse(data []byte, c *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return &Error{Err: err} // yaml's message has the line
	}
	if len(doc.Content) == 0 { // empty file: all defaults
		return nil
	}
	// Before anything is decoded: walk and the list settings copy what an alias stands for.
	if err := checkAliases(&doc, MaxAliasNodes); err != nil {
		return &Error{Err: err}
	}
	return walk(doc.Content[0], "", c)
}

// checkAliases refuses a document whose aliases, expanded, would add more than budget nodes to
// it. The expanded size of each anchored node is computed once, so the check costs one pass over
// the file whatever the expansion.
func checkAliases(doc *yaml.Node, budget int) error {
	var literal int // the nodes as written, each alias one node
	var count func(n *yaml.Node)
	count = func(n *yaml.Node) {
		literal++
		for _, ch := range n.Content {
			count(ch)
		}
	}
	count(doc)
	ceiling := literal + budget + 1 // sizes stop growing there: enough to refuse, and no overflow
	anchored := map[*yaml.Node]int{}
	var first *yaml.Node // the first alias met, for the message
	var size func(n *yaml.Node) int
	size = func(n *yaml.Node) int {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if first == nil {
				first = n
			}
			return size(n.Alias)
		}
		if s, ok := anchored[n]; ok {
			return s
		}
		s := 1
		for _, ch := range n.Content {
			s = min(s+size(ch), ceiling)
		}
		if n.Anchor != "" {
			anchored[n] = s
		}
		return s
	}
	if size(doc)-literal > budget {
		return fmt.Errorf("line %d: aliases (*%s and those after it) expand the document by more than %d nodes; write the values out, or repeat less", first.Line, first.Value, budget)
	}
	return nil
}

func walk(n *yaml.Node, prefix string, c *Config) error {
	n = resolveAlias(n)
	if isNull(n) {
		return nil // "server:" with nothing under it
	}
	if n.Kind != yaml.MappingNode && prefix == "" {
		return &Error{Err: fmt.Errorf("line %d: want sections such as server: and device:, got %s", n.Line, describe(n))}
	}
	if n.Kind != yaml.MappingNode {
		return &Error{Key: prefix, Line: n.Line, Err: fmt.Errorf("want keys under it, got %s", describe(n))}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		key := k.Value
		if prefix != "" {
			key = prefix + "." + k.Value
		}
		if first, dup := seen[k.Value]; dup {
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("duplicate key (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
		s := lookupSetting(key)
		switch {
		case s != nil && s.setEntry != nil:
			if err := setEntries(s, v, c); err != nil {
				return err
			}
		case s != nil && s.setList != nil:
			if err := setList(s, v, c); err != nil {
				return err
			}
		case s != nil && s.setItems != nil:
			if err := s.setItems(c, v); err != nil {
				return err
			}
		case s != nil:
			if isNull(v) {
				continue // "key:" with no value keeps the default
			}
			if v.Kind != yaml.ScalarNode {
				return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want a single value, got %s", describe(v))}
			}
			if err := s.set(c, v.Value); err != nil {
				return &Error{Key: key, Line: v.Line, Err: err}
			}
		case key == "hardware" && v.Kind == yaml.ScalarNode && !isNull(v):
			// The first releases' form, "hardware: sim", is hardware.mode.
			if err := lookupSetting("hardware.mode").set(c, v.Value); err != nil {
				return &Error{Key: key, Line: v.Line, Err: err}
			}
		case prefix == "" && slices.Contains(ignoredSections, key):
			continue
		case isSection(key):
			if err := walk(v, key, c); err != nil {
				return err
			}
		default:
			return &Error{Key: key, Line: k.Line, Err: errors.New("unknown key")}
		}
	}
	return nil
}

func setEntries(s *setting, n *yaml.Node, c *Config) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &Error{Key: s.key, Line: n.Line, Err: fmt.Errorf("want name: value pairs, got %s", describe(n))}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		key := s.key + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Key: key, Line: k.Line, Err: fmt.Errorf("duplicate key (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
		if v.Kind != yaml.ScalarNode || isNull(v) {
			return &Error{Key: key, Line: v.Line, Err: fmt.Errorf("want a single value, got %s", describe(v))}
		}
		if err := s.setEntry(c, k.Value, v.Value); err != nil {
			return &Error{Key: key, Line: v.Line, Err: err}
		}
	}
	return nil
}

func setList(s *setting, n *yaml.Node, c *Config) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return &Error{Key: s.key, Line: n.Line, Err: fmt.Errorf("want a list, e.g. [program, arg], got %s", describe(n))}
	}
	items := make([]string, len(n.Content))
	for i, it := range n.Content {
		it = resolveAlias(it)
		if it.Kind != yaml.ScalarNode || isNull(it) {
			return &Error{Key: s.key, Line: it.Line, Err: fmt.Errorf("item %d: want a single value, got %s", i+1, describe(it))}
		}
		items[i] = it.Value
	}
	if err := s.setList(c, items); err != nil {
		return &Error{Key: s.key, Line: n.Line, Err: err}
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "something else"
}
