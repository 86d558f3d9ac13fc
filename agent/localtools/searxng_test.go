package localtools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// searxStandIn serves SearXNG's /search with a recorded answer and
// remembers the last request.
func searxStandIn(t *testing.T, status int, contentType, body string) (*httptest.Server, *http.Request) {
	t.Helper()
	last := new(http.Request)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*last = *r.Clone(context.Background())
		if r.URL.Path != "/searx/search" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, last
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newSearXNG(t *testing.T, o SearXNGOptions) *SearXNG {
	t.Helper()
	s, err := NewSearXNG(&o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSearXNGMapsResults(t *testing.T) {
	srv, last := searxStandIn(t, http.StatusOK, "application/json", readTestdata(t, "searxng_answer.json"))
	s := newSearXNG(t, SearXNGOptions{BaseURL: srv.URL + "/searx/", Language: "zh-CN"})

	got, err := s.Search(context.Background(), "2023年人工智能的最新进展", 10)
	if err != nil {
		t.Fatal(err)
	}
	q := last.URL.Query()
	if q.Get("q") != "2023年人工智能的最新进展" || q.Get("format") != "json" || q.Get("language") != "zh-CN" {
		t.Errorf("request query = %v", q)
	}
	if last.Method != http.MethodGet || last.Header.Get("Accept") != "application/json" {
		t.Errorf("request %s Accept %q", last.Method, last.Header.Get("Accept"))
	}
	want := []Result{
		{
			URL: "https://news.example.com/tech/2023/ai-breakthroughs", ID: "result-1", Title: "2023年人工智能领域的重大突破",
			Score: 1, PublishedDate: "2023-03-15", Author: "AI研究团队",
			Text:    "2023年，大型语言模型、多模态模型和AI在科学研究中的应用都取得了显著进展。",
			Summary: "2023年，大型语言模型、多模态模型和AI在科学研究中的应用都取得了显著进展。",
		},
		{
			URL: "https://blog.example.org/ai-trends-2023", ID: "result-2", Title: "2023年AI趋势分析", Score: 0.4,
			Text:    "随着计算能力的不断提升和算法的优化，AI正在走向更多行业。",
			Summary: "随着计算能力的不断提升和算法的优化，AI正在走向更多行业。",
		},
		{
			URL: "https://papers.example.net/abs/2306.00001", ID: "result-3", Title: "A Survey of Large Language Models in 2023",
			Score: 0.2, PublishedDate: "2023-06-01", Author: "Li Wei, Zhang Min",
			Text:    "We survey the rapid progress of large language models during 2023, covering pre-training, alignment and evaluation.",
			Summary: "We survey the rapid progress of large language models during 2023, covering pre-training, alignment and evaluation.",
		},
		{URL: "https://wiki.example.com/wiki/人工智能", ID: "result-4", Title: "人工智能 - 维基百科", Score: 0.033},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	// The limit cuts, and the scores are relative to the best kept.
	two, err := s.Search(context.Background(), "x", 2)
	if err != nil || len(two) != 2 || two[1].ID != "result-2" {
		t.Errorf("limit 2: %+v, %v", two, err)
	}
}

func TestSearXNGThroughTool(t *testing.T) {
	srv, _ := searxStandIn(t, http.StatusOK, "application/json", readTestdata(t, "searxng_answer.json"))
	r := newRegistry(t, &Options{Search: newSearXNG(t, SearXNGOptions{BaseURL: srv.URL + "/searx"})})
	got, err := call(t, r, "search_web", `{"query":"2023年人工智能的最新进展","limit":1}`)
	if err != nil {
		t.Fatal(err)
	}
	var rs []map[string]any
	if err := json.Unmarshal([]byte(got), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("search_web = %s (%v)", got, err)
	}
	// Every field of the seed's shape is there, with the seed's names.
	for _, k := range []string{"url", "id", "title", "score", "publishedDate", "author", "text", "summary"} {
		if _, ok := rs[0][k]; !ok {
			t.Errorf("result lacks %q: %s", k, got)
		}
	}
	if len(rs[0]) != 8 {
		t.Errorf("result has extra fields: %s", got)
	}
}

func TestSearXNGFailures(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		says        string
	}{
		{"json format disabled", http.StatusForbidden, "text/html", "<html><body>Forbidden</body></html>", "enable the json format"},
		{"rate limited", http.StatusTooManyRequests, "text/html", "Too Many Requests", "limiter"},
		{"server error", http.StatusBadGateway, "text/html", "bad gateway", "502 Bad Gateway"},
		{"html instead of json", http.StatusOK, "text/html; charset=utf-8", "<!DOCTYPE html><html>results</html>", `not SearXNG's JSON (Content-Type "text/html")`},
		{"truncated json", http.StatusOK, "application/json", `{"results":[{"url":"https://a`, "not SearXNG's JSON"},
		{"only failures", http.StatusOK, "application/json", readTestdata(t, "searxng_no_results.json"), "google (CAPTCHA), duckduckgo (timeout)"},
		{"too large", http.StatusOK, "application/json", `{"results":[],"pad":"` + strings.Repeat("x", maxSearXNGAnswer) + `"}`, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := searxStandIn(t, tt.status, tt.contentType, tt.body)
			s := newSearXNG(t, SearXNGOptions{BaseURL: srv.URL + "/searx"})
			rs, err := s.Search(context.Background(), "q", 5)
			if err == nil {
				t.Fatalf("Search succeeded: %+v", rs)
			}
			if !errors.Is(err, ErrSearchBackend) {
				t.Errorf("error %q is not ErrSearchBackend", err)
			}
			if !strings.Contains(err.Error(), "SearXNG at "+srv.URL+"/searx") {
				t.Errorf("error %q does not name the backend", err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}

func TestSearXNGNoResultsIsNotAnError(t *testing.T) {
	srv, _ := searxStandIn(t, http.StatusOK, "application/json", `{"query":"q","results":[],"unresponsive_engines":[]}`)
	rs, err := newSearXNG(t, SearXNGOptions{BaseURL: srv.URL + "/searx"}).Search(context.Background(), "q", 5)
	if err != nil || len(rs) != 0 {
		t.Errorf("Search = %+v, %v; want no results and no error", rs, err)
	}
}

func TestSearXNGTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	// Unblock the handler before Close waits for it.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	s := newSearXNG(t, SearXNGOptions{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := s.Search(context.Background(), "q", 5)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrSearchBackend) {
		t.Fatalf("slow backend: %v, want a deadline error", err)
	}
	if !strings.Contains(err.Error(), "no answer within 50ms") || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("error %q does not say what happened where", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %v", d)
	}
}

func TestSearXNGUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := newSearXNG(t, SearXNGOptions{BaseURL: url}).Search(context.Background(), "q", 5)
	if !errors.Is(err, ErrSearchBackend) || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), url) {
		t.Errorf("unreachable backend: %v", err)
	}
	if strings.Contains(err.Error(), "format=json") {
		t.Errorf("error %q repeats the request URL", err)
	}
}

func TestNewSearXNGRefusesBadOptions(t *testing.T) {
	for _, o := range []*SearXNGOptions{
		nil,
		{BaseURL: ""},
		{BaseURL: "searx.local:8888"},
		{BaseURL: "ftp://searx.local"},
		{BaseURL: "http://"},
		{BaseURL: "http://searx.local", Timeout: -time.Second},
	} {
		if _, err := NewSearXNG(o); err == nil {
			t.Errorf("NewSearXNG(%+v) succeeded", o)
		}
	}
	// A password in the URL is not shown.
	s := newSearXNG(t, SearXNGOptions{BaseURL: "http://user:secret@searx.local/"})
	if strings.Contains(s.String(), "secret") {
		t.Errorf("String() = %q shows the password", s)
	}
}

func TestMapResults(t *testing.T) {
	in := []searxResult{
		{URL: "", Title: "no url", Score: 9},
		{URL: "https://a", Content: strings.Repeat("字", maxSummary+50)},
		{URL: "https://b"},
	}
	got := mapResults(in, 10)
	if len(got) != 2 || got[0].ID != "result-1" || got[1].ID != "result-2" {
		t.Fatalf("mapResults = %+v", got)
	}
	// Without scores, SearXNG's order ranks: 1, then 0.5.
	if got[0].Score != 1 || got[1].Score != 0.5 {
		t.Errorf("scores = %v, %v", got[0].Score, got[1].Score)
	}
	if n := len([]rune(got[0].Summary)); n != maxSummary || !strings.HasSuffix(got[0].Summary, "…") {
		t.Errorf("summary of %d characters: %q", n, got[0].Summary)
	}
	if len([]rune(got[0].Text)) != maxSummary+50 {
		t.Errorf("text was cut")
	}
}
