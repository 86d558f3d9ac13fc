package opentoolhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// TestSDKWire sends, byte for byte, the requests the public OpenTool SDK
// clients send, and checks the exact answers. The Dart client sends
// "jsonrpc":"2.0", drops a null params, and sets Accept and Content-Type;
// the TypeScript client sends "jsonrpc":"2.0.0" with the id before the
// params. Both put the key in "Authorization: Bearer", read the body of a
// 200 and look at "error", and decode "result" as an object.
func TestSDKWire(t *testing.T) {
	leakCheck(t)
	const (
		key = "opentool-key"
		doc = `{"opentool":"1.0.0","info":{"title":"counter","version":"1.0.0"},"functions":[{"name":"count","description":"Add one","parameters":[]}]}`
	)
	dart := http.Header{
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json"},
		"Authorization": {"Bearer " + key},
	}
	typescript := http.Header{
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json, text/plain, */*"},
		"Authorization": {"Bearer " + key},
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		header http.Header
		body   string
		status int
		want   string
	}{
		{
			name: "dart version", method: "GET", path: "/opentool/version", header: dart,
			status: 200, want: `{"version":"1.0.0"}`,
		},
		{
			name: "typescript load", method: "GET", path: "/opentool/load", header: typescript,
			status: 200, want: doc,
		},
		{
			name: "dart call", method: "POST", path: "/opentool/call", header: dart,
			body:   `{"jsonrpc":"2.0","method":"count","params":{},"id":"call-1"}`,
			status: 200, want: `{"jsonrpc":"2.0","result":{"count":1},"error":null,"id":"call-1"}`,
		},
		{
			name: "dart call without params", method: "POST", path: "/opentool/call", header: dart,
			body:   `{"jsonrpc":"2.0","method":"count","id":"call-2"}`,
			status: 200, want: `{"jsonrpc":"2.0","result":{"count":1},"error":null,"id":"call-2"}`,
		},
		{
			name: "typescript call", method: "POST", path: "/opentool/call", header: typescript,
			body:   `{"jsonrpc":"2.0.0","method":"count","params":{},"id":"1"}`,
			status: 200, want: `{"jsonrpc":"2.0.0","result":{"count":1},"error":null,"id":"1"}`,
		},
		{
			name: "typescript call, id before params", method: "POST", path: "/opentool/call", header: typescript,
			body:   `{"jsonrpc":"2.0.0","method":"echo","id":"2","params":{"text":"héllo","list":[1,2.5,null],"nested":{"ok":true}}}`,
			status: 200, want: `{"jsonrpc":"2.0.0","result":{"text":"héllo","list":[1,2.5,null],"nested":{"ok":true}},"error":null,"id":"2"}`,
		},
		{
			name: "tool error", method: "POST", path: "/opentool/call", header: dart,
			body:   `{"jsonrpc":"2.0","method":"fail","params":{},"id":"call-3"}`,
			status: 200, want: `{"jsonrpc":"2.0","result":{},"error":{"code":-32000,"message":"the motor stalled"},"id":"call-3"}`,
		},
		{
			name: "unknown function", method: "POST", path: "/opentool/call", header: typescript,
			body:   `{"jsonrpc":"2.0.0","method":"jump","params":{"height":2},"id":"3"}`,
			status: 200, want: `{"jsonrpc":"2.0.0","result":{},"error":{"code":-32601,"message":"Method not found: jump"},"id":"3"}`,
		},
		{
			name: "pretty-printed request", method: "POST", path: "/opentool/call", header: dart,
			body:   "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"count\",\n  \"params\": {},\n  \"id\": \"call-4\"\n}\n",
			status: 200, want: `{"jsonrpc":"2.0","result":{"count":1},"error":null,"id":"call-4"}`,
		},
		{
			name: "no key", method: "POST", path: "/opentool/call", header: http.Header{"Content-Type": {"application/json"}},
			body:   `{"jsonrpc":"2.0","method":"count","params":{},"id":"call-5"}`,
			status: 401, want: `{"code":401,"message":"unauthorized: send a valid API key as Authorization: Bearer KEY"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, &opentoolhttp.HandlerOptions{
				Version: "1.0.0",
				Load:    func(context.Context) (json.RawMessage, error) { return json.RawMessage(doc), nil },
				Call:    counter(),
				APIKeys: []string{key},
			})
			a := do(t, tc.method, srv.URL+tc.path, tc.header, strings.NewReader(tc.body))
			if a.status != tc.status || a.body != tc.want+"\n" {
				t.Errorf("%s %s %s\ngot  %d %s\nwant %d %s", tc.method, tc.path, tc.body, a.status, strings.TrimSpace(a.body), tc.status, tc.want)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
		})
	}
}

// TestSDKLoadInlinesRefs: the TypeScript SDK's client (OpenTool.fromJson)
// builds the functions before it reads "schemas", and resolves a $ref only
// against schemas some earlier load put in its table: a document with
// references fails to load there. So /opentool/load inlines them, as the
// SDK's own server does, keeping the members in order, letting a
// description beside a $ref win, and cutting a schema that contains
// itself. KeepRefs serves the document as it is.
func TestSDKLoadInlinesRefs(t *testing.T) {
	leakCheck(t)
	const doc = `{"opentool":"1.0.0","info":{"title":"t","version":"1"},
"functions":[{"name":"move","description":"Move","parameters":[
  {"name":"to","schema":{"$ref":"#/schemas/Point","description":"where"},"required":true},
  {"name":"path","schema":{"type":"array","items":{"$ref":"#/schemas/Point"}},"required":false},
  {"name":"tree","schema":{"$ref":"#/schemas/Node"},"required":false},
  {"name":"other","schema":{"$ref":"#/elsewhere/X"},"required":false}]}],
"schemas":{
  "Point":{"type":"object","description":"a point","properties":{"x":{"type":"number"},"unit":{"$ref":"#/schemas/Unit"}},"required":["x"]},
  "Unit":{"type":"string","enum":["mm","cm"]},
  "Node":{"type":"object","description":"a node","properties":{"kids":{"type":"array","items":{"$ref":"#/schemas/Node"}}}}}}`
	const inlined = `{"opentool":"1.0.0","info":{"title":"t","version":"1"},` +
		`"functions":[{"name":"move","description":"Move","parameters":[` +
		`{"name":"to","schema":{"type":"object","description":"where","properties":{"x":{"type":"number"},"unit":{"type":"string","enum":["mm","cm"]}},"required":["x"]},"required":true},` +
		`{"name":"path","schema":{"type":"array","items":{"type":"object","description":"a point","properties":{"x":{"type":"number"},"unit":{"type":"string","enum":["mm","cm"]}},"required":["x"]}},"required":false},` +
		`{"name":"tree","schema":{"type":"object","description":"a node","properties":{"kids":{"type":"array","items":{"type":"object","description":"a node (recursive: see schemas.Node)"}}}},"required":false},` +
		`{"name":"other","schema":{"$ref":"#/elsewhere/X"},"required":false}]}],` +
		`"schemas":{` +
		`"Point":{"type":"object","description":"a point","properties":{"x":{"type":"number"},"unit":{"type":"string","enum":["mm","cm"]}},"required":["x"]},` +
		`"Unit":{"type":"string","enum":["mm","cm"]},` +
		`"Node":{"type":"object","description":"a node","properties":{"kids":{"type":"array","items":{"type":"object","description":"a node (recursive: see schemas.Node)"}}}}}}`
	load := func(context.Context) (json.RawMessage, error) { return json.RawMessage(doc), nil }

	srv := serve(t, &opentoolhttp.HandlerOptions{Load: load})
	a := do(t, "GET", srv.URL+"/opentool/load", nil, nil)
	if a.status != 200 || a.body != inlined+"\n" {
		t.Errorf("load\ngot  %d %s\nwant 200 %s", a.status, a.body, inlined)
	}
	if strings.Contains(strings.ReplaceAll(a.body, `{"$ref":"#/elsewhere/X"}`, ""), "$ref") {
		t.Errorf("a reference to #/schemas is left, which the TypeScript client cannot load: %s", a.body)
	}

	kept := serve(t, &opentoolhttp.HandlerOptions{Load: load, KeepRefs: true})
	if a := do(t, "GET", kept.URL+"/opentool/load", nil, nil); compact(t, a.body) != compact(t, doc) {
		t.Errorf("load with KeepRefs = %s, want the document as it is", a.body)
	}
}

// Shared schemas that each refer to the next twice would grow 2^n times
// when inlined; past a bound the document is served with its references.
func TestLoadInlineBound(t *testing.T) {
	leakCheck(t)
	var b strings.Builder
	b.WriteString(`{"opentool":"1.0.0","info":{"title":"t","version":"1"},"functions":[{"name":"f","parameters":[{"name":"p","schema":{"$ref":"#/schemas/S0"}}]}],"schemas":{`)
	const n = 40
	for i := range n {
		fmt.Fprintf(&b, `"S%d":{"type":"object","properties":{"a":{"$ref":"#/schemas/S%d"},"b":{"$ref":"#/schemas/S%d"}}},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"S%d":{"type":"string"}}}`, n)
	doc := b.String()
	srv := serve(t, &opentoolhttp.HandlerOptions{Load: func(context.Context) (json.RawMessage, error) { return json.RawMessage(doc), nil }})
	a := do(t, "GET", srv.URL+"/opentool/load", nil, nil)
	if a.status != 200 || compact(t, a.body) != doc {
		t.Errorf("load = %d, %d bytes; want 200 and the document as it is", a.status, len(a.body))
	}
}
