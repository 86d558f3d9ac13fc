package opentoolhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// fuzzMaxBody is small so that the fuzzer reaches the 413 path too.
const fuzzMaxBody = 4096

// fuzzCall does what the method says, so that request bodies pick the
// handler's paths: results, errors with and without data, panics, results
// that are not JSON.
func fuzzCall(ctx context.Context, name string, params json.RawMessage) (any, error) {
	switch name {
	case "echo":
		return params, nil
	case "fail":
		return nil, errors.New("failed: " + name)
	case "rpc":
		return nil, &opentoolhttp.RPCError{Code: 7, Message: "rpc", Data: params}
	case "panic":
		panic("boom")
	case "nil":
		return nil, nil
	case "func":
		return func() {}, nil
	}
	return map[string]string{"method": name}, nil
}

// FuzzHandleCall feeds arbitrary bodies to POST /opentool/call. Whatever
// arrives, the handler must not panic and must answer exactly one JSON-RPC
// response object, valid UTF-8, with all four members the SDK clients read,
// echoing the request's id when it had a usable one.
//
// The seed corpus is in testdata/fuzz/FuzzHandleCall.
func FuzzHandleCall(f *testing.F) {
	h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{Call: fuzzCall, MaxBody: fuzzMaxBody})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/opentool/call", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		checkCallAnswer(t, body, rec)
	})
}

func checkCallAnswer(t *testing.T, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	wantStatus := http.StatusOK
	if len(body) > fuzzMaxBody {
		wantStatus = http.StatusRequestEntityTooLarge
	}
	if rec.Code != wantStatus {
		t.Fatalf("body %q: status %d, want %d", body, rec.Code, wantStatus)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("body %q: Content-Type %q", body, ct)
	}
	out := rec.Body.Bytes()
	if !utf8.Valid(out) {
		t.Fatalf("body %q: answer %q is not UTF-8", body, out)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var resp map[string]json.RawMessage
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("body %q: answer %q is not a JSON object: %v", body, out, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("body %q: answer %q holds more than one JSON value", body, out)
	}
	if len(resp) != 4 {
		t.Fatalf("body %q: answer %s has %d members, want jsonrpc, result, error and id", body, out, len(resp))
	}
	if v := string(resp["jsonrpc"]); v != `"2.0"` && v != `"2.0.0"` {
		t.Fatalf("body %q: answer %s: jsonrpc %s", body, out, v)
	}
	result, rpcErr := resp["result"], resp["error"]
	if len(result) == 0 || string(result) == "null" {
		t.Fatalf("body %q: answer %s: result is missing or null", body, out)
	}
	if len(rpcErr) == 0 {
		t.Fatalf("body %q: answer %s: no error member", body, out)
	}
	if string(rpcErr) != "null" {
		var e struct {
			Code    *int64
			Message *string
		}
		if err := json.Unmarshal(rpcErr, &e); err != nil || e.Code == nil || e.Message == nil || *e.Message == "" || string(result) != "{}" {
			t.Fatalf("body %q: answer %s: error must be {code, message} with result {}", body, out)
		}
	}

	// The id: as sent when the request was an object with a string or
	// number id, null otherwise.
	wantID := "null"
	var req map[string]json.RawMessage
	if wantStatus == http.StatusOK && utf8.Valid(body) && json.Unmarshal(body, &req) == nil && req != nil {
		if id := bytes.TrimSpace(req["id"]); len(id) > 0 && (id[0] == '"' || id[0] == '-' || ('0' <= id[0] && id[0] <= '9')) {
			wantID = string(id)
		}
	}
	if got := string(resp["id"]); got != wantID {
		t.Fatalf("body %q: answer %s: id %s, want %s", body, out, got, wantID)
	}

	// A successful echo returns the params as sent.
	if string(rpcErr) == "null" && string(req["method"]) == `"echo"` {
		want := []byte("{}")
		if p := req["params"]; len(p) > 0 && string(p) != "null" {
			var b bytes.Buffer
			json.Compact(&b, p)
			want = b.Bytes()
		}
		if !bytes.Equal(result, want) {
			t.Fatalf("body %q: answer %s: echo result %s, want %s", body, out, result, want)
		}
	}
}

// FuzzLoadInline feeds arbitrary documents to GET /opentool/load, whose
// $refs the handler inlines. Whatever the document, the answer is a JSON
// object (200) or the error for a document that is not one (500), and an
// object without "$ref" comes back byte for byte.
func FuzzLoadInline(f *testing.F) {
	f.Add(`{"functions":[{"parameters":[{"schema":{"$ref":"#/schemas/A","description":"d"}}]}],"schemas":{"A":{"type":"object","properties":{"b":{"$ref":"#/schemas/B"}}},"B":{"items":{"$ref":"#/schemas/A"}}}}`)
	f.Add(`{"functions":[{"schema":{"$ref":"#/schemas/"}}],"schemas":{"":{"$ref":"#/schemas/"}}}`)
	f.Add(`{"functions":{"$ref":"#/schemas/x"},"schemas":{"x":1}}`)
	f.Add(`{"schemas":[{"$ref":"#/schemas/0"}],"functions":[]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		h, err := opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
			Load: func(context.Context) (json.RawMessage, error) { return json.RawMessage(doc), nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/opentool/load", nil))
		body := rec.Body.Bytes()
		if !json.Valid(body) {
			t.Fatalf("document %q: answer %q is not JSON", doc, body)
		}
		switch rec.Code {
		case http.StatusOK:
			if b := bytes.TrimSpace(body); b[0] != '{' {
				t.Fatalf("document %q: answer %q is not an object", doc, body)
			}
			if trimmed := bytes.TrimSpace([]byte(doc)); json.Valid(trimmed) && utf8.Valid(trimmed) && !bytes.Contains(trimmed, []byte(`"$ref"`)) &&
				len(trimmed) > 0 && trimmed[0] == '{' && !bytes.Equal(bytes.TrimSpace(body), trimmed) {
				t.Fatalf("document %q without $ref came back changed: %q", doc, body)
			}
		case http.StatusInternalServerError:
		default:
			t.Fatalf("document %q: status %d", doc, rec.Code)
		}
	})
}
