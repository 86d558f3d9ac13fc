package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

const (
	// maxResponse caps what a call reads of a response body.
	maxResponse = 1 << 20
	// maxText is how much of a non-JSON body a result carries.
	maxText = 4 << 10
	// maxExcerpt is how much of an error body an error message carries.
	maxExcerpt = 200
)

// errCallTimeout is the cause of a call's context ending at
// Options.Timeout, to tell it from the caller's own deadline.
var errCallTimeout = errors.New("call timeout")

// caller sends the requests of a set's tools.
type caller struct {
	client *http.Client
	// credClient is client for a call that carries credentials: it follows no redirect to another
	// origin, where http.Client would copy a header such as X-API-Key along.
	credClient *http.Client
	timeout    time.Duration
	secrets    []string // kept out of error messages
	userAgent  string
	logger     *slog.Logger
}

// textResult is the result of a 2xx response whose body is not JSON.
type textResult struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	// Body is the beginning of the body when it is UTF-8 text.
	Body string `json:"body,omitempty"`
	// Bytes is the size of the body, up to the read cap.
	Bytes     int  `json:"bytes"`
	Truncated bool `json:"truncated,omitempty"`
}

// emptyResult is the result of a 2xx response without a body.
type emptyResult struct {
	Status int `json:"status"`
}

func (c *caller) call(ctx context.Context, op *operation, input json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errCallTimeout)
	defer cancel()
	req, path, err := c.request(ctx, op, input)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op.method, op.path, err)
	}
	start := time.Now()
	client := c.client
	if len(op.creds) > 0 {
		client = c.credClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// url.Error repeats the whole URL, query included; the method and
		// path say enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(context.Cause(ctx), errCallTimeout) {
			// err is the cause itself; say what it means instead.
			return nil, fmt.Errorf("%s %s: no response within %v: %w", op.method, path, c.timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("%s %s: %w", op.method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		if errors.Is(context.Cause(ctx), errCallTimeout) {
			return nil, fmt.Errorf("%s %s: %s: body not read within %v: %w", op.method, path, statusText(resp.StatusCode), c.timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("%s %s: %s: reading the body: %w", op.method, path, statusText(resp.StatusCode), err)
	}
	truncated := len(data) > maxResponse
	if truncated {
		data = data[:maxResponse]
	}
	c.logger.Debug("call", "tool", op.name, "method", op.method, "path", path,
		"status", resp.StatusCode, "bytes", len(data), "duration", time.Since(start))

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("%s %s: %s", op.method, path, statusText(resp.StatusCode))
		if e := c.excerpt(data); e != "" {
			msg += ": " + e
		}
		if op.wants != "" && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			msg += " (the operation's security wants " + op.wants + ", which the configured credentials do not meet)"
		}
		return nil, errors.New(msg)
	}
	if len(bytes.TrimSpace(data)) == 0 || op.method == http.MethodHead {
		return emptyResult{Status: resp.StatusCode}, nil
	}
	ct := resp.Header.Get("Content-Type")
	if isJSON(ct) || ct == "" && json.Valid(data) {
		if truncated {
			return nil, fmt.Errorf("%s %s: %s: the JSON body is larger than %d bytes", op.method, path, statusText(resp.StatusCode), maxResponse)
		}
		if json.Valid(data) {
			return json.RawMessage(data), nil
		}
		// A server that says JSON and sends something else: hand over
		// the text, as for any other type.
	}
	r := textResult{Status: resp.StatusCode, ContentType: ct, Bytes: len(data), Truncated: truncated}
	if utf8.Valid(cutUTF8(data, maxText)) {
		t := cutUTF8(data, maxText)
		r.Body = string(t)
		r.Truncated = truncated || len(t) < len(data)
	}
	return r, nil
}

// statusText is "404 Not Found", from the code alone: the reason phrase a
// server sends is its text, not ours.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return strconv.Itoa(code)
}

// excerpt makes an error body fit in one short line of an error message:
// secrets redacted, control characters removed, at most maxExcerpt bytes.
func (c *caller) excerpt(data []byte) string {
	// Redact before cutting, so that a cut cannot leave a secret's prefix.
	s := c.redact(string(data))
	s = strings.ToValidUTF8(string(cutUTF8([]byte(s), 4*maxExcerpt)), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxExcerpt {
		return s
	}
	return string(cutUTF8([]byte(s), maxExcerpt-len("..."))) + "..."
}

// redact replaces the secrets in s, as sent and as a query or cookie
// carries them.
func (c *caller) redact(s string) string {
	for _, secret := range c.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
		if e := queryEscape(secret, false); e != secret {
			s = strings.ReplaceAll(s, e, "[redacted]")
		}
	}
	return s
}

// cutUTF8 returns at most n bytes of b, not splitting a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// request builds the HTTP request of one call, and returns the path as sent,
// without the base URL, for messages.
func (c *caller) request(ctx context.Context, op *operation, input json.RawMessage) (*http.Request, string, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(input, &args); err != nil {
		return nil, "", fmt.Errorf("tool_input: %w", err)
	}
	path := op.path
	var query []string
	header := http.Header{}
	var cookies []string
	for _, p := range op.params {
		raw, ok := args[p.prop]
		if !ok || string(compact(raw)) == "null" {
			if p.in == "path" {
				return nil, "", fmt.Errorf("path parameter %q is missing", p.name)
			}
			continue
		}
		v, err := decode(raw)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", p.prop, err)
		}
		if p.json {
			// A parameter with content is sent as one JSON text.
			v = string(compactJSON(raw))
		}
		switch p.in {
		case "path":
			s := pathValue(p, v)
			if s == "" {
				return nil, "", fmt.Errorf("path parameter %q is empty", p.name)
			}
			path = strings.ReplaceAll(path, "{"+p.name+"}", s)
		case "query":
			query = append(query, queryValue(p, v)...)
		case "header":
			s := headerValue(p, v)
			if strings.IndexFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) >= 0 {
				return nil, "", fmt.Errorf("header parameter %q: the value has control characters", p.name)
			}
			header.Set(p.name, s)
		case "cookie":
			cookies = append(cookies, cookieValue(p, v)...)
		}
	}
	for _, cr := range op.creds {
		switch cr.in {
		case "header":
			header.Set(cr.name, cr.value)
		case "query":
			query = append(query, queryEscape(cr.name, false)+"="+queryEscape(cr.value, false))
		case "cookie":
			cookies = append(cookies, cr.name+"="+queryEscape(cr.value, false))
		}
	}
	target := op.base.String() + path
	if len(query) > 0 {
		target += "?" + strings.Join(query, "&")
	}
	u, err := url.Parse(target)
	if err != nil {
		// The error quotes the URL, which may hold an API key.
		return nil, "", fmt.Errorf("request URL of %s: %s", path, c.redact(err.Error()))
	}
	var rb io.Reader
	if op.body != nil {
		if raw, ok := args[op.body.prop]; ok {
			rb = bytes.NewReader(compact(raw))
		}
	}
	req, err := http.NewRequestWithContext(ctx, op.method, u.String(), rb)
	if err != nil {
		return nil, "", err
	}
	// NewRequest parses the URL again; keep the exact escaping built above.
	req.URL = u
	maps.Copy(req.Header, header)
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if rb != nil {
		req.Header.Set("Content-Type", op.body.contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	return req, path, nil
}

// compact trims the whitespace JSON allows around a value (bytes.TrimSpace
// would take more).
func compact(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// decode decodes one input value, keeping numbers as written.
func decode(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// scalar is the text of a primitive value. Values the style cannot express
// (an object inside an array) are sent as JSON text.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// pairs flattens an object into key, value, key, value, ..., keys sorted:
// the input's order is not kept by decoding, and a stable order makes
// requests reproducible.
func pairs(m map[string]any, esc func(string) string) []string {
	out := make([]string, 0, 2*len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, esc(k), esc(scalar(m[k])))
	}
	return out
}

func items(a []any, esc func(string) string) []string {
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = esc(scalar(x))
	}
	return out
}

// pairList turns key, value, ... into k=v pieces.
func pairList(kv []string) []string {
	out := make([]string, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		out = append(out, kv[i]+"="+kv[i+1])
	}
	return out
}

// joinPairs joins key, value, ... as k=v separated by sep.
func joinPairs(kv []string, sep string) string {
	return strings.Join(pairList(kv), sep)
}

// pathValue serializes a path parameter (styles simple, label, matrix),
// each value escaped with url.PathEscape so that '/', ',', ';' and '?' in
// a value cannot be read as structure.
func pathValue(p *param, v any) string {
	esc := url.PathEscape
	name := esc(p.name)
	switch x := v.(type) {
	case []any:
		it := items(x, esc)
		if len(it) == 0 {
			return ""
		}
		switch {
		case p.style == "label" && p.explode:
			return "." + strings.Join(it, ".")
		case p.style == "label":
			return "." + strings.Join(it, ",")
		case p.style == "matrix" && p.explode:
			return ";" + name + "=" + strings.Join(it, ";"+name+"=")
		case p.style == "matrix":
			return ";" + name + "=" + strings.Join(it, ",")
		}
		return strings.Join(it, ",")
	case map[string]any:
		kv := pairs(x, esc)
		if len(kv) == 0 {
			return ""
		}
		switch {
		case p.style == "label" && p.explode:
			return "." + joinPairs(kv, ".")
		case p.style == "label":
			return "." + strings.Join(kv, ",")
		case p.style == "matrix" && p.explode:
			return ";" + joinPairs(kv, ";")
		case p.style == "matrix":
			return ";" + name + "=" + strings.Join(kv, ",")
		case p.explode:
			return joinPairs(kv, ",")
		}
		return strings.Join(kv, ",")
	}
	s := esc(scalar(v))
	switch p.style {
	case "label":
		return "." + s
	case "matrix":
		return ";" + name + "=" + s
	}
	return s
}

// queryValue serializes a query parameter into name=value pieces, already
// escaped: form (explode or not), spaceDelimited, pipeDelimited and
// deepObject. An empty array or object sends nothing.
func queryValue(p *param, v any) []string {
	esc := func(s string) string { return queryEscape(s, p.reserved) }
	return pieces(queryEscape(p.name, false), v, p.style, p.explode, esc)
}

// pieces serializes v as name=value pieces in style, each value escaped by
// esc: what a query parameter and a cookie (always style form) share.
func pieces(name string, v any, style string, explode bool, esc func(string) string) []string {
	switch x := v.(type) {
	case []any:
		it := items(x, esc)
		if len(it) == 0 {
			return nil
		}
		if explode {
			out := make([]string, len(it))
			for i, s := range it {
				out[i] = name + "=" + s
			}
			return out
		}
		return []string{name + "=" + strings.Join(it, delimiter(style))}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		if style == "deepObject" {
			return deepObject(name, x, esc)
		}
		kv := pairs(x, esc)
		if explode {
			return pairList(kv)
		}
		return []string{name + "=" + strings.Join(kv, delimiter(style))}
	}
	return []string{name + "=" + esc(scalar(v))}
}

// delimiter separates the values of an unexploded array or object. The
// space and pipe are escaped, as OpenAPI's examples show; the comma is a
// sub-delimiter a query may carry as is.
func delimiter(style string) string {
	switch style {
	case "spaceDelimited":
		return "%20"
	case "pipeDelimited":
		return "%7C"
	}
	return ","
}

// deepObject sends name[key]=value for each key, keys sorted, nesting
// brackets for nested objects (name[a][b]=v) and repeating the key for
// arrays (name[a]=1&name[a]=2): OpenAPI leaves both undefined, and these
// are what common servers parse.
func deepObject(prefix string, m map[string]any, esc func(string) string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := prefix + "[" + esc(k) + "]"
		switch x := m[k].(type) {
		case map[string]any:
			out = append(out, deepObject(key, x, esc)...)
		case []any:
			for _, it := range x {
				out = append(out, key+"="+esc(scalar(it)))
			}
		default:
			out = append(out, key+"="+esc(scalar(x)))
		}
	}
	return out
}

// queryEscape percent-encodes everything but RFC 3986's unreserved
// characters, and its reserved ones too when allowReserved. A space is %20,
// not '+', which only form decoders read as a space.
func queryEscape(s string, allowReserved bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || allowReserved && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// headerValue serializes a header parameter (style simple). Header values
// are not escaped; control characters are refused by the caller.
func headerValue(p *param, v any) string {
	id := func(s string) string { return s }
	switch x := v.(type) {
	case []any:
		return strings.Join(items(x, id), ",")
	case map[string]any:
		kv := pairs(x, id)
		if p.explode {
			return joinPairs(kv, ",")
		}
		return strings.Join(kv, ",")
	}
	return scalar(v)
}

// cookieValue serializes a cookie parameter (style form) into name=value
// pieces. Values are percent-encoded as in a query, since a cookie cannot
// carry spaces, quotes, commas or semicolons; the comma of an unexploded
// array is the delimiter.
func cookieValue(p *param, v any) []string {
	return pieces(p.name, v, "form", p.explode, func(s string) string { return queryEscape(s, false) })
}
