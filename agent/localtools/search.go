package localtools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/devicectl/devicectl/tools"
)

// Backend runs web searches for search_web.
type Backend interface {
	// Search returns at most limit results for query, best first. IDs are
	// filled by the backend ("result-1", ...), Scores lie in [0,1].
	Search(ctx context.Context, query string, limit int) ([]Result, error)
}

// Result is one search result, in seed 004's shape. Fields the engine did
// not give are empty strings, never guesses.
type Result struct {
	URL           string  `json:"url"`
	ID            string  `json:"id"`
	Title         string  `json:"title"`
	Score         float64 `json:"score"`
	PublishedDate string  `json:"publishedDate"`
	Author        string  `json:"author"`
	Text          string  `json:"text"`
	Summary       string  `json:"summary"`
}

// ErrNoBackend is search_web called while no search backend is configured.
var ErrNoBackend = errors.New("search_web: no search backend is configured; set agent.search.searxng_url " +
	"in the config to the address of a SearXNG instance whose settings.yml enables the json format " +
	"(search.formats: [html, json])")

// Search limits: how many results search_web returns by default and at
// most, and how long a query may be.
const (
	DefaultSearchLimit = 5
	MaxSearchLimit     = 20
	MaxQueryLen        = 500 // characters
)

type searchInput struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty" tool:"min=1,max=20"`
}

func searchTool(b Backend, log *slog.Logger) (*tools.Tool, error) {
	t, err := tools.Func(tools.LocalQuery(ToolSearch,
		"Searches the web and returns a list of results, best first: "+
			`[{"url","id","title","score" (relevance 0..1),"publishedDate","author","text","summary"}]. `+
			"Use it for current events, facts you are unsure of, or anything after your training data; "+
			"cite the url of what you use. Empty fields mean the source did not say. "+
			"It fails with an error when no search backend is configured; tell the user so instead of guessing."),
		func(ctx context.Context, in searchInput) ([]Result, error) {
			q := strings.TrimSpace(in.Query)
			if q == "" {
				return nil, errors.New("search_web: the query is empty")
			}
			if utf8.RuneCountInString(q) > MaxQueryLen {
				return nil, fmt.Errorf("search_web: the query is longer than %d characters", MaxQueryLen)
			}
			if b == nil {
				return nil, ErrNoBackend
			}
			limit := in.Limit
			if limit == 0 {
				limit = DefaultSearchLimit
			}
			rs, err := b.Search(ctx, q, limit)
			if err != nil {
				log.Debug("search failed", "query", q, "err", err)
				return nil, err
			}
			if len(rs) > limit {
				rs = rs[:limit]
			}
			log.Debug("search", "query", q, "results", len(rs))
			if rs == nil {
				rs = []Result{} // [] rather than null: no results is an answer
			}
			return rs, nil
		})
	if err != nil {
		return nil, err
	}
	p := t.Parameters.Properties["query"]
	p.Description = "What to search for, in the user's language, e.g. \"2023年人工智能的最新进展\"."
	p.MinLength, p.MaxLength = ptr(1), ptr(MaxQueryLen)
	t.Parameters.Properties["limit"].Description = fmt.Sprintf("How many results to return, 1 to %d; default %d.", MaxSearchLimit, DefaultSearchLimit)
	return t, nil
}
