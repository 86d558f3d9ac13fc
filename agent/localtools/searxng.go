package localtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// SearXNGOptions configures a SearXNG backend.
type SearXNGOptions struct {
	// BaseURL is the instance's address, e.g. "http://127.0.0.1:8888"; its
	// settings.yml must list json under search.formats.
	BaseURL string
	// Client sends the requests; nil is a client of its own.
	Client *http.Client
	// Timeout bounds one search; 0 is DefaultSearchTimeout.
	Timeout time.Duration
	// Language is SearXNG's language parameter ("zh-CN", "en"); "" leaves
	// the instance's default.
	Language string
}

// DefaultSearchTimeout bounds a search when SearXNGOptions.Timeout is 0.
const DefaultSearchTimeout = 10 * time.Second

// maxSearXNGAnswer caps the answer read from SearXNG: a page of results is
// tens of KiB, so anything near this is not an answer.
const maxSearXNGAnswer = 4 << 20

// maxSummary is the length of a Result's Summary, in characters.
const maxSummary = 300

// ErrSearchBackend is a search the backend failed: unreachable, slow, an
// HTTP error or an answer that is not its JSON. The error names the
// backend's address.
var ErrSearchBackend = errors.New("search backend failed")

// SearXNG is a Backend that asks a SearXNG instance through its JSON API
// (GET <base>/search?q=...&format=json).
type SearXNG struct {
	base     *url.URL
	shown    string // base, with any password hidden, for messages
	client   *http.Client
	timeout  time.Duration
	language string
}

var _ Backend = (*SearXNG)(nil)

// NewSearXNG returns a backend for the instance at o.BaseURL, which must be
// an absolute http or https URL.
func NewSearXNG(o *SearXNGOptions) (*SearXNG, error) {
	var opts SearXNGOptions
	if o != nil {
		opts = *o
	}
	u, err := url.Parse(strings.TrimSpace(opts.BaseURL))
	if err != nil {
		return nil, fmt.Errorf("localtools: SearXNG URL %q: %w", opts.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("localtools: SearXNG URL %q is not an absolute http(s) URL", opts.BaseURL)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("localtools: negative SearXNG timeout %v", opts.Timeout)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultSearchTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &SearXNG{base: u, shown: u.Redacted(), client: opts.Client, timeout: opts.Timeout, language: opts.Language}, nil
}

// String names the backend in logs and errors.
func (s *SearXNG) String() string { return "SearXNG at " + s.shown }

// searxAnswer is the part of SearXNG's JSON answer we read.
type searxAnswer struct {
	Results             []searxResult     `json:"results"`
	UnresponsiveEngines []json.RawMessage `json:"unresponsive_engines"` // [name, reason] pairs
}

type searxResult struct {
	URL           string      `json:"url"`
	Title         string      `json:"title"`
	Content       string      `json:"content"`
	Score         float64     `json:"score"`
	PublishedDate looseString `json:"publishedDate"`
	Author        looseString `json:"author"`
	Authors       looseString `json:"authors"` // the paper template's list
}

// looseString decodes a string, a list of strings (joined with ", ") or
// null: SearXNG's engines fill these fields each in their own way.
type looseString string

func (l *looseString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = looseString(s)
		return nil
	}
	var list []string
	if json.Unmarshal(b, &list) == nil {
		*l = looseString(strings.Join(list, ", "))
		return nil
	}
	*l = "" // null, a number, an object: nothing we can show
	return nil
}

// Search asks SearXNG and maps its results to search_web's shape.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	u := *s.base
	u.Path += "/search"
	q := url.Values{"q": {query}, "format": {"json"}}
	if s.language != "" {
		q.Set("language", s.language)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, s.fail("building the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "devicectl")
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, s.fail("no answer within %v: %w", s.timeout, context.DeadlineExceeded)
		}
		// url.Error repeats the full URL with the query; say only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, s.fail("unreachable: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearXNGAnswer+1))
	if err != nil {
		return nil, s.fail("reading the answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusForbidden:
		return nil, s.fail("answered 403 Forbidden: its settings.yml probably does not enable the json format; add json under search.formats")
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, s.fail("answered 429 Too Many Requests: its limiter refuses us; set server.limiter: false for local use")
	case resp.StatusCode != http.StatusOK:
		return nil, s.fail("answered %s", resp.Status)
	}
	if len(body) > maxSearXNGAnswer {
		return nil, s.fail("answer is larger than %d bytes", maxSearXNGAnswer)
	}
	var a searxAnswer
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&a); err != nil {
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		return nil, s.fail("answer is not SearXNG's JSON (Content-Type %q): %w", ct, err)
	}
	rs := mapResults(a.Results, limit)
	if len(rs) == 0 && len(a.UnresponsiveEngines) > 0 {
		return nil, s.fail("no results, and these engines failed: %s", engineFailures(a.UnresponsiveEngines))
	}
	return rs, nil
}

func (s *SearXNG) fail(format string, args ...any) error {
	return fmt.Errorf("search_web: %s: %w: %w", s, ErrSearchBackend, fmt.Errorf(format, args...))
}

// mapResults turns SearXNG's results into search_web's: results without a
// URL are dropped, scores are divided by the best one so that they lie in
// [0,1] (SearXNG's own grow with the number of engines that agree), and
// IDs number what is kept.
func mapResults(in []searxResult, limit int) []Result {
	var kept []searxResult
	for _, r := range in {
		if strings.TrimSpace(r.URL) != "" {
			kept = append(kept, r)
		}
	}
	if len(kept) > limit {
		kept = kept[:limit]
	}
	best := 0.0
	for _, r := range kept {
		if !math.IsNaN(r.Score) && r.Score > best {
			best = r.Score
		}
	}
	out := make([]Result, len(kept))
	for i, r := range kept {
		var score float64
		if best > 0 && r.Score > 0 {
			score = r.Score / best
		} else if best == 0 {
			// No scores at all: SearXNG's order is its ranking.
			score = float64(len(kept)-i) / float64(len(kept))
		}
		text := strings.TrimSpace(r.Content)
		author := string(r.Author)
		if author == "" {
			author = string(r.Authors)
		}
		out[i] = Result{
			URL:           strings.TrimSpace(r.URL),
			ID:            fmt.Sprintf("result-%d", i+1),
			Title:         strings.TrimSpace(r.Title),
			Score:         math.Round(score*1000) / 1000,
			PublishedDate: dateOnly(string(r.PublishedDate)),
			Author:        strings.TrimSpace(author),
			Text:          text,
			Summary:       shorten(text, maxSummary),
		}
	}
	return out
}

// dateOnly writes SearXNG's ISO timestamps ("2023-03-15T00:00:00") as the
// seed's dates ("2023-03-15"); anything else is kept as given.
func dateOnly(s string) string {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return s
}

// shorten cuts s to at most n characters, ending with "…" when cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return strings.TrimSpace(string(rs[:n-1])) + "…"
}

// engineFailures lists SearXNG's unresponsive_engines as "name (reason)".
func engineFailures(raw []json.RawMessage) string {
	var parts []string
	for _, r := range raw {
		var pair []string
		if json.Unmarshal(r, &pair) == nil && len(pair) > 0 {
			if len(pair) > 1 && pair[1] != "" {
				parts = append(parts, fmt.Sprintf("%s (%s)", pair[0], pair[1]))
			} else {
				parts = append(parts, pair[0])
			}
		}
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}
