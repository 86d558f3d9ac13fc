package config

import (
	"errors"
	"fmt"
	"time"
)

// MCPSetConfig is one MCP server whose tools become device tools: a program devicectl starts
// (stdio) or a Streamable HTTP endpoint. Exactly one of Command and URL is set.
type MCPSetConfig struct {
	Name        string            // names the set in logs; the default prefix is Name + "_"
	Command     []string          // argv of a stdio server, run without a shell
	Env         map[string]string // added to a stdio server's environment
	URL         string            // a Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp
	TokenFile   string            // the token sent to URL as Authorization: Bearer
	Tools       []string          // the tools to declare, by the server's names; empty: all
	SubTypes    map[string]string // per tool (the server's name); else query
	Prefix      string            // put before each tool's name; empty: Name + "_"
	Timeout     time.Duration     // one call
	InitTimeout time.Duration     // starting, initialize and the first tools/list
}

// DefaultMCPSet is a toolsets.mcp item before its keys are read.
func DefaultMCPSet() MCPSetConfig {
	return MCPSetConfig{Env: map[string]string{}, SubTypes: map[string]string{}, Timeout: 30 * time.Second, InitTimeout: 10 * time.Second}
}

// checkToolSetName keeps a set's name usable as the start of a tool name.
func checkToolSetName(v string) (string, error) {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "", fmt.Errorf("%q: use letters, digits, _ and - (it starts the tools' names)", v)
		}
	}
	return v, nil
}

func checkMCPSet(s *MCPSetConfig) (string, error) {
	switch {
	case s.Name == "":
		return "name", errors.New("missing (a short name such as everything; the tools are declared as NAME_tool)")
	case len(s.Command) == 0 && s.URL == "":
		return "command", errors.New("missing: set command (a stdio server's argv) or url (a Streamable HTTP server)")
	case len(s.Command) > 0 && s.URL != "":
		return "url", errors.New("set command or url, not both")
	case s.TokenFile != "" && s.URL == "":
		return "token_file", errors.New("set without url (a stdio server gets no token)")
	case len(s.Env) > 0 && s.URL != "":
		return "env", errors.New("set with url (only a stdio server, started by devicectl, gets an environment)")
	}
	if s.Prefix == "" {
		s.Prefix = s.Name + "_"
	}
	return "", nil
}
