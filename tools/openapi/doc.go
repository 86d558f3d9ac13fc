// Package openapi makes device tools of the operations of an OpenAPI 3.0 or
// 3.1 document, so that the agent server can call an HTTP service the device
// reaches (the robot arm's controller, a local home automation hub) without
// anybody writing a tool per endpoint.
//
//	set, err := openapi.Load(ctx, "/etc/devicectl/arm.yaml", &openapi.Options{
//		Auth:      openapi.Auth{BearerToken: token, APIKey: key},
//		UserAgent: "devicectl/" + version,
//	})
//	for _, t := range set.Tools() {
//		err := registry.Add(t)
//	}
//
// # Loading
//
// Load reads a file or an http(s) URL, JSON or YAML; FromData takes the
// document itself. The document is parsed and validated by
// github.com/getkin/kin-openapi, which resolves its $refs. Validation is
// strict except for what real-world documents often get wrong without
// making their operations uncallable: examples and defaults that do not
// match their schemas, and patterns Go's regexp cannot compile. Errors name
// the file, the place in the document (for example "invalid path /pets:
// invalid operation GET: parameter \"limit\" ...") and, for an invalid
// document, its line. References to other documents are followed only from
// a file to files and from a URL to URLs of the same host.
//
// An OpenAPI 3.1 document is first made readable for kin-openapi, which
// lacks parts of 3.1: a $ref that names a schema of the document by its
// $id (resolved against the enclosing $ids and the document's URL), by a
// $anchor (also "#name" for the only anchor of that name anywhere), or by
// a pointer inside a schema with an $id becomes a pointer from the
// document's root; references to components.pathItems are replaced by
// copies of the path items (the referring object's own fields win);
// webhooks are dropped, with a Debug record, since they are requests the
// API sends and not operations to call; and schema keywords kin-openapi
// does not know, which JSON Schema 2020-12 allows, are dropped. A $ref
// that names an $id or $anchor the document does not have is an error.
// Errors of a document so rewritten name the place by its path in the
// document, not by line.
//
// # Names
//
// A tool is named after its operationId when that matches
// ^[a-zA-Z0-9_-]{1,64}$. Otherwise the name is the operationId with every
// run of other characters replaced by "_" ("pets.get by id" ->
// "pets_get_by_id") or, without a usable operationId, the method and path
// (GET /pets/{petId}/toys -> "get_pets_petId_toys"). A name longer than 64
// characters is cut and ends in "_" and 8 hex digits of a hash of the whole
// name. Valid operationIds are assigned first and never change; the other
// names are assigned in the order of path, then method, a clash getting
// "_2", "_3", ... Names do not depend on Options.Include.
//
// The description is the operation's summary and description, or
// "METHOD /path" when it has neither.
//
// # Input
//
// A tool's input is one object (additionalProperties: false, so that a
// misspelt parameter is an error rather than silently not sent):
//
//   - one property per parameter (path, query, header, cookie; the path's
//     parameters merged with the operation's, the operation's replacing
//     those of the same name and location), named as the parameter;
//   - when two locations have a parameter of the same name, both are named
//     "<in>_<name>" ("query_id", "header_id"), as is a parameter named
//     "body" when there is a body;
//   - "body": the JSON request body, if the operation has one.
//
// Path parameters are always required, others as the document says, and
// the body when requestBody.required. Header parameters named Accept,
// Content-Type or Authorization are ignored, as OpenAPI says.
//
// Schemas are converted to JSON Schema 2020-12 for
// github.com/google/jsonschema-go. References are expanded in place, except
// recursive ones, which become "#/$defs/<component name>" references into
// the input schema's $defs. 3.0's nullable, boolean exclusiveMinimum and
// exclusiveMaximum and example are mapped to their 2020-12 forms; 3.1's type
// arrays, const, examples and numeric bounds are kept. readOnly properties
// are left out, since requests do not carry them. discriminator, xml,
// externalDocs and x- extensions are dropped; format is kept as a hint. A
// pattern Go cannot compile goes into the description instead. 3.1's
// const: null is lost (kin-openapi cannot tell it from no const).
//
// A request body that must be sent but has no JSON media type (a
// multipart upload, say) makes the operation unusable: it is skipped, and
// listed by ToolSet.Skipped. An optional one is left out.
//
// # Requests
//
// Each call sends one request to the base URL: Options.BaseURL, or the
// operation's first server (else its path's, else the document's), with
// server variables from Options.ServerVariables or their defaults. A
// relative server URL is resolved against the document's URL; for a
// document read from a file or data, Options.BaseURL must then be set
// (the error names devicectl's config key for it, base_url).
//
// Parameters are serialized per their style and explode, as in the OpenAPI
// specification's style examples:
//
//   - path (simple, label, matrix): every value escaped by url.PathEscape,
//     so "a/b c" is "a%2Fb%20c" and the separators stay structure;
//   - query (form with and without explode, spaceDelimited, pipeDelimited,
//     deepObject): values percent-encoded except RFC 3986's unreserved
//     characters (space as %20, the delimiters %20 and %7C), and reserved
//     ones too for allowReserved; parameters in document order; an empty
//     array or object sends nothing; deepObject nests objects as
//     name[a][b]=v and repeats arrays as name[a]=1&name[a]=2;
//   - header (simple): values as they are; control characters are refused;
//   - cookie (form): one Cookie header, values percent-encoded.
//
// Object keys are sent sorted. A parameter described by content (a JSON
// query parameter) is sent as JSON text. The body is sent as given, with
// the document's JSON media type as Content-Type. Every request has
// Accept: application/json, User-Agent: Options.UserAgent, and the
// credentials its operation asks for; an absent or null optional parameter
// is not sent, and defaults are left to the server.
//
// # Credentials
//
// Options.Auth may hold a bearer token and an API key together. What a
// call sends follows its operation's security requirements, the
// operation's own replacing the document's:
//
//   - none declared, for the operation or the document: every credential
//     configured;
//   - security: [] : none;
//   - otherwise the first alternative, in document order, whose every
//     scheme has a credential, and only the credentials of its schemes;
//     an empty alternative ({}) is taken only when no other can be met.
//
// The bearer token serves schemes of type http with scheme bearer, oauth2
// and openIdConnect, as "Authorization: Bearer <token>". The API key
// serves one apiKey scheme (Auth.APIKeyScheme, else the one whose header
// is Auth.APIKeyHeader, else the document's only one), in the header,
// query parameter or cookie it names, percent-encoded in a query or
// cookie. When APIKeyHeader names a header no scheme uses, the key goes in
// it with every call but those of security: []. Other schemes (http basic,
// mutualTLS) cannot be met. A parameter that a call's credentials fill in
// is left out of the tool's input. A call whose requirement cannot be met
// goes without credentials, and a 401 or 403 answer then says what the
// operation wanted:
//
//	GET /vet/records: 401 Unauthorized: ... (the operation's security wants mutual_tls (mutualTLS: not supported), which the configured credentials do not meet)
//
// # Results and errors
//
// A 2xx response with a JSON body gives that JSON as the result; one
// without a body (204, HEAD) gives {"status": 204}; any other body gives
//
//	{"status": 200, "content_type": "text/plain", "body": "...", "bytes": 1234, "truncated": true}
//
// where body is the first 4 KiB when it is UTF-8 text (and absent
// otherwise), bytes the size read, and truncated says body is not all of
// it. At most 1 MiB of a response is read; a larger JSON body is an error.
//
// Any other status is an error with the method, the path as sent, the
// status and the start of the body, at most 200 bytes on one line:
//
//	GET /pets/7: 404 Not Found: {"message":"no such pet"}
//
// A request that fails is an error with the method and path too:
//
//	GET /pets: dial tcp 127.0.0.1:8080: connect: connection refused
//	GET /slow: no response within 10s: context deadline exceeded
//
// Each call is bounded by Options.Timeout. The credentials are never
// logged and never appear in an error, even when a server echoes them.
package openapi
