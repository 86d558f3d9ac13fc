package config

import (
	"errors"
	"time"
)

// OpenAPISetConfig is one OpenAPI document whose operations become device tools.
type OpenAPISetConfig struct {
	Spec            string            // file or http(s) URL
	BaseURL         string            // instead of the document's servers
	ServerVariables map[string]string // values of the servers' variables
	Operations      []string          // the tools to declare; empty: all
	SubTypes        map[string]string // per tool; else GET and HEAD are query, the rest control
	Prefix          string            // put before each tool's name
	BearerTokenFile string            // sent as Authorization: Bearer, where the operation's security asks
	APIKeyFile      string            // sent where the operation's security asks, as its apiKey scheme says
	APIKeyScheme    string            // the apiKey scheme APIKeyFile is for; empty: the document's only one
	APIKeyHeader    string            // a header for APIKeyFile when no scheme of the document describes it
	Timeout         time.Duration     // one call
}

// DefaultOpenAPISet is a toolsets.openapi item before its keys are read.
func DefaultOpenAPISet() OpenAPISetConfig {
	return OpenAPISetConfig{ServerVariables: map[string]string{}, SubTypes: map[string]string{}, Timeout: 10 * time.Second}
}

func checkOpenAPISet(s *OpenAPISetConfig) (string, error) {
	switch {
	case s.Spec == "":
		return "spec", errors.New("missing (an OpenAPI file or URL)")
	case s.APIKeyHeader != "" && s.APIKeyFile == "":
		return "api_key_header", errors.New("set without api_key_file")
	case s.APIKeyScheme != "" && s.APIKeyFile == "":
		return "api_key_scheme", errors.New("set without api_key_file")
	case s.APIKeyScheme != "" && s.APIKeyHeader != "":
		return "api_key_header", errors.New("set with api_key_scheme: the scheme says where the key goes, set one")
	}
	return "", nil
}
