package opentoolhttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
)

// Defaults for the zero values of ClientOptions.
const (
	// DefaultTimeout bounds each request of the default HTTP client, answer
	// included.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponse is the largest answer body read, in bytes.
	DefaultMaxResponse = 4 << 20
	// DefaultUserAgent is the User-Agent header sent.
	DefaultUserAgent = "devicectl-opentoolhttp"
)

// excerptLimit bounds how much of an unexpected body goes into an error.
const excerptLimit = 200

// ClientOptions configures NewClient. A nil *ClientOptions means all
// defaults. NewClient copies the options; it never changes the caller's
// struct.
type ClientOptions struct {
	// APIKey, when not empty, is sent as "Authorization: Bearer KEY". It
	// never appears in an error: text from the server that contains it is
	// redacted.
	APIKey string
	// HTTPClient sends the requests; nil means a client of its own with
	// DefaultTimeout. Its Timeout (or the context's deadline) is what turns
	// a silent server into ErrUnreachable.
	HTTPClient *http.Client
	// UserAgent is sent as the User-Agent header; empty means
	// DefaultUserAgent.
	UserAgent string
	// MaxResponse is the largest answer body read, in bytes; 0 means
	// DefaultMaxResponse.
	MaxResponse int64
}

// Client calls one OpenTool server. Its methods may be called from several
// goroutines at once.
type Client struct {
	server      string // the root as errors show it: scheme://host[/path]
	base        string // server + Prefix
	apiKey      string
	userAgent   string
	maxResponse int64
	hc          *http.Client
	lastID      atomic.Uint64
}

// NewClient returns a client for the server at baseURL, its root: for
// example "http://10.0.0.5:9627". A trailing "/opentool" and trailing
// slashes are accepted and dropped; another path is kept as a prefix (for
// a server behind a reverse proxy). A URL without a port means 80 or 443,
// as for any URL, not DefaultPort.
func NewClient(baseURL string, opts *ClientOptions) (*Client, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if !strings.Contains(baseURL, "://") {
		shown := baseURL
		if i := strings.LastIndex(shown, "@"); i >= 0 {
			shown = "…" + shown[i:] // what comes before an @ may be a password
		}
		return nil, fmt.Errorf("opentoolhttp: base URL %q must start with http:// or https://", shown)
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		// Not err itself: url.Error repeats the URL, which may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("opentoolhttp: invalid base URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("opentoolhttp: base URL %s must start with http:// or https://", u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("opentoolhttp: base URL %s holds credentials; pass the key as ClientOptions.APIKey", u.Redacted())
	case u.Host == "":
		return nil, fmt.Errorf("opentoolhttp: base URL %s has no host", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("opentoolhttp: base URL %s must not have a query or a fragment", u.Redacted())
	}
	if strings.ContainsFunc(o.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return nil, errors.New("opentoolhttp: ClientOptions.APIKey holds a space or control character, which no Authorization header can carry")
	}
	if strings.ContainsFunc(o.UserAgent, unicode.IsControl) {
		return nil, fmt.Errorf("opentoolhttp: ClientOptions.UserAgent %q holds a control character", o.UserAgent)
	}
	if o.MaxResponse < 0 {
		return nil, fmt.Errorf("opentoolhttp: MaxResponse must not be negative, got %d", o.MaxResponse)
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	path = strings.TrimRight(strings.TrimSuffix(path, Prefix), "/")
	c := &Client{
		server:      u.Scheme + "://" + u.Host + path,
		apiKey:      o.APIKey,
		userAgent:   o.UserAgent,
		maxResponse: o.MaxResponse,
		hc:          o.HTTPClient,
	}
	c.base = c.server + Prefix
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.maxResponse == 0 {
		c.maxResponse = DefaultMaxResponse
	}
	if c.hc == nil {
		// A transport of its own, so that CloseIdleConnections closes only
		// this client's connections.
		c.hc = &http.Client{Timeout: DefaultTimeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	// Ids are decimal strings counting up from a random start: unique per
	// call, unlikely to repeat across clients and restarts, and below 2^53
	// so that a server that turns them into numbers (JavaScript) keeps them
	// exact.
	var seed [8]byte
	rand.Read(seed[:])
	c.lastID.Store(binary.BigEndian.Uint64(seed[:]) >> 12)
	return c, nil
}

// CloseIdleConnections closes the HTTP client's idle connections (those
// of ClientOptions.HTTPClient, when one was given). Call it when done with
// the client; it may still be used afterwards.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Version asks GET /opentool/version for the server's version.
func (c *Client) Version(ctx context.Context) (string, error) {
	const op = "version"
	status, data, err := c.roundTrip(ctx, op, http.MethodGet, "/version", nil)
	if err != nil {
		return "", err
	}
	if len(data) == 0 || string(data) == "null" {
		return "", c.fail(op, status, ErrResponseNull, "the body is "+describeEmpty(data))
	}
	if !json.Valid(data) || kindOf(data) != kindObject {
		return "", c.fail(op, status, ErrProtocol, "the answer is not a JSON object: "+c.excerpt(data))
	}
	var v struct {
		Version json.RawMessage `json:"version"`
	}
	json.Unmarshal(data, &v) // valid JSON object: cannot fail
	var version string
	if kindOf(v.Version) != kindString || json.Unmarshal(v.Version, &version) != nil || version == "" {
		return "", c.fail(op, status, ErrProtocol, `the answer has no "version" string: `+c.excerpt(data))
	}
	return version, nil
}

// Load asks GET /opentool/load for the server's OpenTool document. It
// returns nil and no error when the server has none: it answered {}, null,
// or the {"code":...,"message":...} object the public SDK servers send
// when they have no document.
func (c *Client) Load(ctx context.Context) (json.RawMessage, error) {
	const op = "load"
	status, data, err := c.roundTrip(ctx, op, http.MethodGet, "/load", nil)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, c.fail(op, status, ErrResponseNull, "the body is empty")
	}
	if !json.Valid(data) {
		return nil, c.fail(op, status, ErrProtocol, "the answer is not JSON: "+c.excerpt(data))
	}
	switch kindOf(data) {
	case kindNull:
		return nil, nil
	case kindObject:
	default:
		return nil, c.fail(op, status, ErrProtocol, "the document is not a JSON object: "+c.excerpt(data))
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(data, &fields) // valid JSON object: cannot fail
	if len(fields) == 0 || isSDKNoDocument(fields) {
		return nil, nil
	}
	return data, nil
}

// isSDKNoDocument reports the answer the Dart and TypeScript SDK servers
// give when their tool has no document: the JSON of their
// JsonParserException, {"code":404,"message":"Json Parser NOT implement"}.
// A document always has other members ("opentool", "info", ...).
func isSDKNoDocument(fields map[string]json.RawMessage) bool {
	return len(fields) == 2 && kindOf(fields["code"]) == kindNumber && kindOf(fields["message"]) == kindString
}

// Call calls the function name with params, a JSON object (nil or JSON
// null mean {}), through POST /opentool/call, and returns the answer's
// "result". Each call carries a fresh id, and the answer must carry the
// same one, as a string or as a number.
//
// The answer decides the error, in this order:
//   - a non-null "error" member: ErrCall, with the server's code and
//     message. Its id may also be null or "", which some servers send when
//     they fail before reading the request's;
//   - a non-null "result": success;
//   - neither member at all: ErrResponseNull;
//   - otherwise ("result" and "error" both null, or one null and the other
//     absent): ErrErrorNull.
//
// An empty body or JSON null is ErrResponseNull too.
func (c *Client) Call(ctx context.Context, name string, params json.RawMessage) (json.RawMessage, error) {
	op := "call " + strconv.Quote(name)
	if name == "" {
		return nil, fmt.Errorf("opentool %s: call: the function name is empty", c.server)
	}
	params = bytes.TrimSpace(params)
	switch {
	case len(params) == 0 || string(params) == "null":
		params = emptyObject
	case !json.Valid(params):
		return nil, fmt.Errorf("opentool %s: %s: params are not valid JSON", c.server, op)
	case kindOf(params) != kindObject:
		return nil, fmt.Errorf("opentool %s: %s: params must be a JSON object, not %s", c.server, op, kindOf(params))
	}
	id := strconv.FormatUint(c.lastID.Add(1), 10)
	body, err := encodeJSON(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		ID      string          `json:"id"`
	}{version20, name, params, id})
	if err != nil {
		return nil, fmt.Errorf("opentool %s: %s: %w", c.server, op, err)
	}
	status, data, err := c.roundTrip(ctx, op, http.MethodPost, "/call", body)
	if err != nil {
		return nil, err
	}
	return c.decodeCall(op, id, status, data)
}

// decodeCall applies Call's rules to the body of a 2xx answer.
func (c *Client) decodeCall(op, id string, status int, data []byte) (json.RawMessage, error) {
	if len(data) == 0 {
		return nil, c.fail(op, status, ErrResponseNull, "the body is empty")
	}
	if !json.Valid(data) {
		return nil, c.fail(op, status, ErrProtocol, "the answer is not JSON: "+c.excerpt(data))
	}
	switch kindOf(data) {
	case kindNull:
		return nil, c.fail(op, status, ErrResponseNull, "the body is JSON null")
	case kindObject:
	default:
		return nil, c.fail(op, status, ErrProtocol, "the answer is not a JSON-RPC response object: "+c.excerpt(data))
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(data, &fields) // valid JSON object: cannot fail
	result, hasResult := fields["result"]
	rpcErr, hasError := fields["error"]
	answerID := fields["id"]

	if hasError && kindOf(rpcErr) != kindNull {
		// A server that fails before it has read the request's id answers
		// with none (JSON-RPC says null; the Dart SDK server sends ""),
		// and its message is still the best explanation there is.
		noID := kindOf(answerID) == kindInvalid || kindOf(answerID) == kindNull || string(answerID) == `""`
		if !noID && !sameID(answerID, id) {
			return nil, c.idMismatch(op, id, status, answerID)
		}
		return nil, c.callError(op, status, rpcErr)
	}
	if hasResult && kindOf(result) != kindNull {
		if !sameID(answerID, id) {
			return nil, c.idMismatch(op, id, status, answerID)
		}
		return result, nil
	}
	if !hasResult && !hasError {
		return nil, c.fail(op, status, ErrResponseNull, "the answer has neither a result nor an error: "+c.excerpt(data))
	}
	return nil, c.fail(op, status, ErrErrorNull, c.excerpt(data))
}

// sameID reports whether an answer's id is the request's, sent as a string
// or as a number.
func sameID(raw json.RawMessage, id string) bool {
	switch kindOf(raw) {
	case kindString:
		var s string
		return json.Unmarshal(raw, &s) == nil && s == id
	case kindNumber:
		return string(raw) == id
	}
	return false
}

func (c *Client) idMismatch(op, id string, status int, got json.RawMessage) error {
	if len(got) == 0 {
		return c.fail(op, status, ErrProtocol, "the answer has no id; the request's was "+id)
	}
	return c.fail(op, status, ErrProtocol, fmt.Sprintf("the answer's id %s is not the request's %q", c.excerpt(got), id))
}

// callError reads the server's error member leniently: whatever the server
// put there, it meant to say the call failed.
func (c *Client) callError(op string, status int, raw json.RawMessage) *ClientError {
	e := &ClientError{Kind: ErrCall, Server: c.server, Op: op, Status: status}
	switch kindOf(raw) {
	case kindObject:
		var obj map[string]json.RawMessage
		json.Unmarshal(raw, &obj)
		if code := obj["code"]; kindOf(code) == kindNumber {
			if n, err := strconv.ParseInt(string(code), 10, 64); err == nil {
				e.Code = n
			} else if f, err := strconv.ParseFloat(string(code), 64); err == nil && f == float64(int64(f)) {
				e.Code = int64(f) // 500.0 from a server that has only floats
			}
		}
		switch msg := obj["message"]; kindOf(msg) {
		case kindString:
			json.Unmarshal(msg, &e.Message)
		case kindNull, kindInvalid:
		default:
			e.Message = string(msg)
		}
		if data := obj["data"]; kindOf(data) != kindNull && kindOf(data) != kindInvalid {
			e.Data = []byte(c.redact(string(data)))
		}
	case kindString:
		json.Unmarshal(raw, &e.Message)
	default:
		e.Message = string(raw)
	}
	e.Message = c.redact(e.Message)
	return e
}

// roundTrip sends one request and returns the status and trimmed body of
// a 2xx answer, or a *ClientError.
func (c *Client) roundTrip(ctx context.Context, op, method, endpoint string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+endpoint, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("opentool %s: %s: %w", c.server, op, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, c.netError(ctx, op, err)
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		// The body says nothing the status does not; reading a little of
		// it lets the connection be reused.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		kind := ErrUnauthorized
		if resp.StatusCode == http.StatusNotFound {
			kind = ErrUnreachable
		}
		return 0, nil, &ClientError{Kind: kind, Server: c.server, Op: op, Status: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResponse+1))
	if err != nil {
		return 0, nil, c.netError(ctx, op, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, nil, c.fail(op, resp.StatusCode, ErrProtocol, fmt.Sprintf("unexpected HTTP status %s: %s", resp.Status, c.excerpt(data)))
	}
	if int64(len(data)) > c.maxResponse {
		return 0, nil, c.fail(op, resp.StatusCode, ErrProtocol, fmt.Sprintf("the answer is larger than %d bytes", c.maxResponse))
	}
	return resp.StatusCode, bytes.TrimSpace(data), nil
}

// netError classifies a failure to get an answer: the caller's
// cancellation is not the server's fault; everything else, timeouts
// included, is ErrUnreachable.
func (c *Client) netError(ctx context.Context, op string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &ClientError{Kind: context.Canceled, Server: c.server, Op: op}
	}
	// url.Error repeats method and URL; the message already names both.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &ClientError{Kind: ErrUnreachable, Server: c.server, Op: op, Err: err}
}

func (c *Client) fail(op string, status int, kind error, message string) *ClientError {
	return &ClientError{Kind: kind, Server: c.server, Op: op, Status: status, Message: message}
}

// excerpt is a short, one-line, redacted piece of a body for an error.
func (c *Client) excerpt(data []byte) string {
	if len(data) == 0 {
		return "(empty body)"
	}
	// Redact before cutting, so that no prefix of the key survives a cut.
	return oneLine(c.redact(string(data)), excerptLimit)
}

// redact hides the API key in text that came from the server, which might
// echo the request's headers.
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[API key]")
}

func describeEmpty(data []byte) string {
	if len(data) == 0 {
		return "empty"
	}
	return "JSON null"
}
