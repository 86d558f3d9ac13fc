package config

// Key documents one key of the config file, for --help and the README's table.
type Key struct {
	Name    string // dotted, e.g. connection.ping_interval; toolsets.opentool[].url for an item's
	Flag    string // the flag that sets it, without --; "" for keys only the file sets
	Usage   string
	Default string // as the file would write it
	Items   []Key  // for a list of mappings (toolsets.opentool): the keys of each mapping
}

// Keys lists every key in the order of configs/devicectl.yaml, with its value in defaults.
func Keys(defaults *Config) []Key {
	keys := make([]Key, len(settings))
	for i, s := range settings {
		keys[i] = Key{Name: s.key, Flag: s.flag, Usage: s.help(), Default: s.get(defaults)}
		if s.rows != nil {
			for _, r := range s.rows() {
				keys[i].Items = append(keys[i].Items, Key{Name: r.key, Usage: r.usage, Default: r.def})
			}
		}
	}
	return keys
}
