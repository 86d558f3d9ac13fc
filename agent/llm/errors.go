package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ErrToolRounds ends a turn whose model still asked for tools after Options.MaxToolRounds rounds
// of them: a model that loops on tool calls must not keep the device busy forever.
var ErrToolRounds = errors.New("llm: the model kept calling tools")

// ErrTimeout is the cause of an EndpointError for a request that did not finish within
// Options.Timeout.
var ErrTimeout = errors.New("llm: the endpoint did not answer in time")

// EndpointError is a chat-completions request that failed: the endpoint could not be reached,
// answered with an error status, sent something that is not a chat-completion stream, cut the
// stream, or was too slow. It names the endpoint, never the API key.
type EndpointError struct {
	URL        string // the chat-completions URL, any password in it redacted
	StatusCode int    // the HTTP status when the endpoint answered with a non-2xx one, else 0
	Message    string // what went wrong, in the endpoint's own words where it gave any
	Err        error  // the cause, for errors.Is/As (ErrTimeout, a net error, ...); may be nil
}

func (e *EndpointError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("llm: %s: %d %s: %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
	}
	return fmt.Sprintf("llm: %s: %s", e.URL, e.Message)
}

func (e *EndpointError) Unwrap() error { return e.Err }

// Bounds on what is read of a response that is not a stream, to quote it in an error.
const (
	maxErrorBody   = 8 << 10
	maxQuotedChars = 300
)

// checkResponse is SDK middleware: it turns a non-2xx answer, or a 2xx one that is not an event
// stream (an HTML page from a proxy, a JSON body from a server that ignored "stream"), into an
// EndpointError quoting the body. The SDK on its own would read an HTML page as an empty stream
// and lose an error body that is not shaped like OpenAI's.
func (p *Planner) checkResponse(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil {
		return res, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		body := readSome(res.Body)
		return nil, &EndpointError{URL: p.url, StatusCode: res.StatusCode, Message: errorMessage(body)}
	}
	ct := res.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); mt != "text/event-stream" {
		body := readSome(res.Body)
		if ct == "" {
			ct = "no Content-Type"
		}
		return nil, &EndpointError{URL: p.url, Message: fmt.Sprintf("answered with %s instead of an event stream: %s", ct, quote(body))}
	}
	return res, nil
}

// readSome reads the start of a body to quote it, and closes the body.
func readSome(body io.ReadCloser) []byte {
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	return b
}

// errorMessage finds the message in an error body, in the shapes servers use: OpenAI's, llama.cpp's
// and Ollama's {"error":{"message":...}}, {"error":"..."}, vLLM's {"message":...}, {"detail":...};
// any other body is quoted as it is.
func errorMessage(body []byte) string {
	var shapes struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &shapes) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(shapes.Error, &nested) == nil && nested.Message != "":
			return quote([]byte(nested.Message))
		case json.Unmarshal(shapes.Error, &s) == nil && s != "":
			return quote([]byte(s))
		case shapes.Message != "":
			return quote([]byte(shapes.Message))
		case json.Unmarshal(shapes.Detail, &s) == nil && s != "":
			return quote([]byte(s))
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "(empty body)"
	}
	return quote(body)
}

// quote makes a body fit in a one-line error: whitespace collapsed, cut at maxQuotedChars.
func quote(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	if utf8.RuneCountInString(s) > maxQuotedChars {
		s = string([]rune(s)[:maxQuotedChars]) + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
