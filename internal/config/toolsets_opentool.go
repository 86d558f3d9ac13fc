package config

import (
	"errors"
	"time"
)

// OpenToolSetConfig is one OpenTool server whose functions become device tools.
type OpenToolSetConfig struct {
	URL        string            // the server's root, e.g. http://127.0.0.1:9627
	APIKeyFile string            // the key sent as Authorization: Bearer
	Functions  []string          // the functions to declare; empty: all
	SubType    string            // of every function not in SubTypes
	SubTypes   map[string]string // per function
	Prefix     string            // put before each function's name
	Timeout    time.Duration     // one call
	Refresh    time.Duration     // how often the function list is read again
	DropAfter  time.Duration     // unreachable this long: its tools are withdrawn
}

// DefaultOpenToolSet is a toolsets.opentool item before its keys are read.
func DefaultOpenToolSet() OpenToolSetConfig {
	return OpenToolSetConfig{SubType: "query", SubTypes: map[string]string{}, Timeout: 10 * time.Second, Refresh: 30 * time.Second, DropAfter: 10 * time.Minute}
}

// openToolSetsKey is toolsets.opentool with its item keys.
func openToolSetsKey() setting {
	return itemsKey("toolsets.opentool", "OpenTool servers whose functions the device declares as its own tools; calls are forwarded to them", func(c *Config) *[]OpenToolSetConfig { return &c.ToolSets.OpenTool }, DefaultOpenToolSet, checkOpenToolSet, []itemKey[*OpenToolSetConfig]{
		itemString("url", "the server's root, e.g. http://192.168.1.20:9627 (required)", func(s *OpenToolSetConfig) *string { return &s.URL }, checkHTTPURL),
		itemString("api_key_file", "file holding the API key sent as Authorization: Bearer", func(s *OpenToolSetConfig) *string { return &s.APIKeyFile }, nil),
		itemList("functions", "the functions to declare; empty: all the server lists", func(s *OpenToolSetConfig) *[]string { return &s.Functions }),
		itemString("sub_type", "sub_type of the functions not in sub_types: query (the server waits for the result) or control", func(s *OpenToolSetConfig) *string { return &s.SubType }, checkSubType),
		itemMap("sub_types", "sub_type per function, e.g. {turn_on: control}", func(s *OpenToolSetConfig) *map[string]string { return &s.SubTypes }, checkSubType),
		itemString("prefix", "put before each function's name, e.g. lights_ (the name stays within 64 characters)", func(s *OpenToolSetConfig) *string { return &s.Prefix }, nil),
		itemDuration("timeout", "one forwarded call", func(s *OpenToolSetConfig) *time.Duration { return &s.Timeout }),
		itemDuration("refresh", "how often the server's function list is read again (tools added or removed are registered again)", func(s *OpenToolSetConfig) *time.Duration { return &s.Refresh }),
		itemDuration("drop_after", "a server unreachable this long has its tools withdrawn until it is back", func(s *OpenToolSetConfig) *time.Duration { return &s.DropAfter }),
	})
}

func checkOpenToolSet(s *OpenToolSetConfig) (string, error) {
	if s.URL == "" {
		return "url", errors.New("missing (the OpenTool server's root, e.g. http://192.168.1.20:9627)")
	}
	return "", nil
}
