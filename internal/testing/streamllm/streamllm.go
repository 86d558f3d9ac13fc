// Package streamllm is an OpenAI-compatible chat endpoint for tests whose turns must stream, or
// run until the test ends them: every answer streams chunks of text of about 1 KiB.
package streamllm

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Start serves the endpoint until the test ends and returns its base URL (llm.base_url). Each
// answer streams a chunk every pace: n of them and then the end, or until the request goes when
// n is 0.
func Start(t testing.TB, n int, pace time.Duration) string {
	t.Helper()
	text := strings.Repeat("la ", 340)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		chunk := func(delta, finish string) error {
			fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
			return rc.Flush()
		}
		tick := time.NewTicker(pace)
		defer tick.Stop()
		for i := 0; n == 0 || i < n; i++ {
			if chunk(`{"content":"`+text+`"}`, "null") != nil {
				return
			}
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
		}
		chunk(`{}`, `"stop"`)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}
