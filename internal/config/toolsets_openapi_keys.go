//go:build openapi || !devicectl_omit_serve

package config

import "time"

// openAPISetsKey is toolsets.openapi with its item keys: in builds that have OpenAPI tool sets
// (the openapi tag) and in the laptop build, whose help and README list every key.
func openAPISetsKey() setting {
	return itemsKey("toolsets.openapi", "OpenAPI 3.0/3.1 documents whose operations the device declares as its own tools; calls become HTTP requests", func(c *Config) *[]OpenAPISetConfig { return &c.ToolSets.OpenAPI }, DefaultOpenAPISet, checkOpenAPISet, []itemKey[*OpenAPISetConfig]{
		itemString("spec", "the document: a file, or an http(s) URL (required)", func(s *OpenAPISetConfig) *string { return &s.Spec }, nil),
		itemString("base_url", "send requests here instead of the document's servers", func(s *OpenAPISetConfig) *string { return &s.BaseURL }, checkHTTPURL),
		itemMap("server_variables", "values of the servers' {variables}, e.g. {port: \"8443\"}", func(s *OpenAPISetConfig) *map[string]string { return &s.ServerVariables }, nil),
		itemList("operations", "the tools to declare, by name; empty: all", func(s *OpenAPISetConfig) *[]string { return &s.Operations }),
		itemMap("sub_types", "sub_type per tool; else GET and HEAD are query, the rest control", func(s *OpenAPISetConfig) *map[string]string { return &s.SubTypes }, checkSubType),
		itemString("prefix", "put before each tool's name", func(s *OpenAPISetConfig) *string { return &s.Prefix }, nil),
		itemString("bearer_token_file", "file holding a token sent as Authorization: Bearer to the operations whose security asks for http bearer, oauth2 or openIdConnect", func(s *OpenAPISetConfig) *string { return &s.BearerTokenFile }, nil),
		itemString("api_key_file", "file holding an API key sent, in the header, query or cookie its apiKey scheme names, to the operations whose security asks for it (with bearer_token_file too, if need be)", func(s *OpenAPISetConfig) *string { return &s.APIKeyFile }, nil),
		itemString("api_key_scheme", "the document's apiKey security scheme api_key_file is for; empty: its only one", func(s *OpenAPISetConfig) *string { return &s.APIKeyScheme }, nil),
		itemString("api_key_header", "send api_key_file in this header with every call instead, for a document whose schemes do not describe the key", func(s *OpenAPISetConfig) *string { return &s.APIKeyHeader }, nil),
		itemDuration("timeout", "one call", func(s *OpenAPISetConfig) *time.Duration { return &s.Timeout }),
	})
}
