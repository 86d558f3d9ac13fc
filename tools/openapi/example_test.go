package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/openapi"
)

func Example() {
	const spec = `
openapi: 3.1.0
info: {title: Lamps, version: "1"}
paths:
  /lamps/{id}:
    get:
      operationId: getLamp
      summary: Read a lamp's state
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: verbose, in: query, schema: {type: boolean}}
      responses:
        "200": {description: The lamp.}
`
	// The lamp hub: it answers with the request it saw, or fails for the
	// broken lamp.
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/lamps/broken" {
			http.Error(w, "lamp not responding", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"seen": %q, "on": true}`, r.RequestURI)
	}))
	defer hub.Close()

	set, err := openapi.FromData([]byte(spec), &openapi.Options{BaseURL: hub.URL})
	if err != nil {
		log.Fatal(err)
	}
	r := tools.NewRegistry()
	for _, t := range set.Tools() {
		if err := r.Add(t); err != nil {
			log.Fatal(err)
		}
	}
	decl, _ := json.Marshal(r.Declarations()[0])
	fmt.Println(string(decl))

	for _, input := range []string{`{"id": "desk lamp", "verbose": true}`, `{"id": "broken"}`} {
		tool, err := r.Validate("getLamp", json.RawMessage(input))
		if err != nil {
			log.Fatal(err)
		}
		result, err := tool.Invoke(context.Background(), json.RawMessage(input))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		out, _ := json.Marshal(result)
		fmt.Println("result:", string(out))
	}
	// Output:
	// {"name":"getLamp","description":"Read a lamp's state","main_type":"remote","sub_type":"query","parameters":{"type":"object","properties":{"id":{"type":"string"},"verbose":{"type":"boolean"}},"required":["id"],"additionalProperties":false}}
	// result: {"seen":"/lamps/desk%20lamp?verbose=true","on":true}
	// error: GET /lamps/broken: 503 Service Unavailable: lamp not responding
}
