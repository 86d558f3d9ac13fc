package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// envelope is a JSON-RPC 2.0 request as it arrived, read and checked by readEnvelope before
// its method is dispatched: by precheck to a2a-go on the A2A paths, by the seed routes to
// theirs.
type envelope struct {
	ID     json.RawMessage // as sent; nil when the member is absent (a notification)
	Method string
	Params json.RawMessage
	body   []byte
}

var nullID = json.RawMessage("null")

// readEnvelope reads r's body as a JSON-RPC 2.0 request. It refuses, as an a2a-go error whose
// data.details names the problem: a body past maxRequestBody (ErrInvalidRequest), one it cannot
// read, that is empty, is not UTF-8 (JSON text must be, RFC 8259, and an id read from it could
// not be echoed) or is not JSON (ErrParseError); a request that is not an object, or whose id,
// jsonrpc or method is missing or wrong (ErrInvalidRequest). env is never nil: with an error,
// env.ID is the id to answer with once it is known good, else nil (null).
func readEnvelope(w http.ResponseWriter, r *http.Request) (env *envelope, err error) {
	env = &envelope{}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return env, withDetails(a2a.ErrInvalidRequest, fmt.Sprintf("Request body is larger than %d bytes", maxRequestBody))
		}
		return env, withDetails(a2a.ErrParseError, fmt.Sprintf("Could not read the request body: %v", err))
	}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return env, withDetails(a2a.ErrParseError, "The request body is empty")
	case !utf8.Valid(body):
		return env, withDetails(a2a.ErrParseError, "The request body is not valid UTF-8, as JSON text must be (RFC 8259)")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return env, withDetails(a2a.ErrInvalidRequest, "The request must be a JSON object")
		}
		return env, withDetails(a2a.ErrParseError, "Malformed JSON: "+err.Error())
	}
	if obj == nil {
		return env, withDetails(a2a.ErrInvalidRequest, "The request must be a JSON object")
	}
	if id, ok := obj["id"]; ok {
		if !validID(id) {
			return env, withDetails(a2a.ErrInvalidRequest, "id must be a string, a number or null")
		}
		env.ID = id
	}
	invalid := func(format string, args ...any) (*envelope, error) {
		return env, withDetails(a2a.ErrInvalidRequest, fmt.Sprintf(format, args...))
	}
	var version string
	raw, ok := obj["jsonrpc"]
	if !ok {
		return invalid("Missing required field: jsonrpc")
	}
	if json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return invalid(`jsonrpc must be "2.0", got %s`, raw)
	}
	raw, ok = obj["method"]
	if !ok {
		return invalid("Missing required field: method")
	}
	if json.Unmarshal(raw, &env.Method) != nil {
		return invalid("method must be a string, got %s", raw)
	}
	env.Params, env.body = obj["params"], body
	return env, nil
}

// validID reports whether a JSON-RPC id is a string, a number or null.
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return bytes.Equal(raw, nullID)
}

// JSON-RPC answers in seed 004's shape: data is an object with details.
type (
	rpcResponse struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *rpcError       `json:"error,omitempty"`
	}
	rpcError struct {
		Code    int           `json:"code"`
		Message string        `json:"message"`
		Data    *rpcErrorData `json:"data,omitempty"`
	}
	rpcErrorData struct {
		Details string `json:"details"`
	}
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only our own types are written: a bug
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck // the client went away
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	if id == nil {
		id = nullID
	}
	writeJSON(w, status, rpcResponse{JSONRPC: "2.0", ID: id, Error: e})
}
