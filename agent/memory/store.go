package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent/store"
)

// Limits of what one memory may hold. The tools declare the same limits in
// their schemas, so a model gets them as -32602 with the field named.
const (
	MaxUserIDLen    = 256  // characters of a user id
	MaxContentRunes = 2000 // characters of a memory's content
	MaxTopics       = 16   // topics per memory
	MaxTopicRunes   = 64   // characters of one topic
	MaxQueryRunes   = 1000 // characters of a search query
	DefaultLimit    = 5    // hits Search returns when the limit is 0
	MaxLimit        = 50   // most hits Search returns
)

// maxQueryTerms bounds the distinct terms a search looks up.
const maxQueryTerms = 256

// topicWeight is how much more a topic hit counts than a content hit.
const topicWeight = 2

// ErrInvalid is input the Store refuses (an empty user, an oversized memory).
var ErrInvalid = errors.New("invalid input")

// idPrefix starts every memory id. The number after it is the row's
// sequence number, which neither database reuses (SQLite's AUTOINCREMENT,
// PostgreSQL's identity column).
const idPrefix = "memory-"

// schema is the memory tables' migrations (see store.DB.Migrate). On SQLite,
// version 1 kept a hand-made inverted index (memory_terms) and per-user
// statistics for its ranker; version 2 replaces them with FTS5. PostgreSQL
// starts where SQLite is now (pgSchema).
var schema = store.Schema{
	SQLite: append(store.SQL(`CREATE TABLE memory_users (
		uid       INTEGER PRIMARY KEY,
		user_id   TEXT NOT NULL UNIQUE,
		memories  INTEGER NOT NULL,
		total_len INTEGER NOT NULL,
		version   INTEGER NOT NULL
	);
	CREATE TABLE memory_items (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		uid        INTEGER NOT NULL REFERENCES memory_users (uid),
		content    TEXT NOT NULL,
		topics     TEXT NOT NULL, -- JSON array of strings
		doc_len    INTEGER NOT NULL,
		created_at INTEGER NOT NULL -- Unix milliseconds
	);
	CREATE INDEX memory_items_by_user ON memory_items (uid, seq);
	CREATE TABLE memory_terms (
		uid        INTEGER NOT NULL,
		term       TEXT NOT NULL,
		seq        INTEGER NOT NULL REFERENCES memory_items (seq) ON DELETE CASCADE,
		tf_content INTEGER NOT NULL,
		tf_topic   INTEGER NOT NULL,
		doc_len    INTEGER NOT NULL,
		PRIMARY KEY (uid, term, seq)
	) WITHOUT ROWID;
	CREATE INDEX memory_terms_by_item ON memory_terms (seq);`), toFTS),
	Postgres: store.SQL(pgSchema),
}

// memoryTokens returns a memory's content and topic terms, space-separated.
func memoryTokens(content string, topics []string) (string, string) {
	var topicTokens []string
	for _, t := range topics {
		topicTokens = append(topicTokens, docTokens(t)...)
	}
	return strings.Join(docTokens(content), " "), strings.Join(topicTokens, " ")
}

// ftsTerms prefixes each space-separated term with the user's uid: a search
// then reads only its user's postings, and bm25's document frequencies are
// the user's own, so what other users' memories say does not move the
// scores (the count of memories and their average length stay the table's).
func ftsTerms(uid int64, tokens string) string {
	if tokens == "" {
		return ""
	}
	prefix := strconv.FormatInt(uid, 10) + "_"
	return prefix + strings.ReplaceAll(tokens, " ", " "+prefix)
}

// Store keeps users' memories in the agent's database (agent/store). It is
// safe for concurrent use, and several processes may share one database.
type Store struct {
	db *store.DB
}

// Hit is one memory Search found.
type Hit struct {
	ID        string   `json:"id"`
	Memory    string   `json:"memory"`
	Topics    []string `json:"topics"`
	Relevance float64  `json:"relevance"` // in [0, 1]; see Search
}

// New returns a Store on db, creating or upgrading its tables. db stays the
// caller's to close.
func New(ctx context.Context, db *store.DB) (*Store, error) {
	if err := db.Migrate(ctx, "memory", schema); err != nil {
		return nil, err
	}
	if err := db.Prepare(ctx, upsertUser, insertSQLite, ftsInsert, deleteItem, ftsDelete); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return &Store{db: db}, nil
}

// Add stores a memory of userID and returns its id ("memory-<n>"). content
// must not be empty; empty and repeated topics are dropped.
func (s *Store) Add(ctx context.Context, userID, content string, topics []string) (string, error) {
	content = strings.TrimSpace(content)
	if err := checkUser(userID); err != nil {
		return "", err
	}
	switch {
	case content == "":
		return "", fmt.Errorf("memory: %w: content is empty", ErrInvalid)
	case utf8.RuneCountInString(content) > MaxContentRunes:
		return "", fmt.Errorf("memory: %w: content is longer than %d characters", ErrInvalid, MaxContentRunes)
	case !store.Storable(content):
		return "", fmt.Errorf("memory: %w: content is not valid UTF-8 or holds a NUL character", ErrInvalid)
	}
	topics, err := cleanTopics(topics)
	if err != nil {
		return "", err
	}
	tokens, topicTokens := memoryTokens(content, topics)
	topicsJSON, err := json.Marshal(topics)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}

	tx, err := s.db.BeginWrite(ctx)
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	defer tx.Rollback() // after Commit it does nothing
	var uid int64
	if err := s.db.TxQueryRow(ctx, tx, upsertUser, userID).Scan(&uid); err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	seq, err := s.insert(ctx, tx, uid, content, string(topicsJSON), tokens, topicTokens, time.Now().UnixMilli())
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	return idPrefix + strconv.FormatInt(seq, 10), nil
}

// The statements of Add and Delete, prepared by New.
const (
	// DO UPDATE, not DO NOTHING, so that RETURNING gives an existing uid.
	upsertUser = `INSERT INTO memory_users (user_id) VALUES (?)
		ON CONFLICT (user_id) DO UPDATE SET user_id = excluded.user_id
		RETURNING uid`
	insertSQLite = `INSERT INTO memory_items (uid, content, topics, tokens, topic_tokens, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`
	insertPostgres = `INSERT INTO memory_items (uid, content, topics, tokens, topic_tokens, created_at, terms)
		VALUES (?, ?, ?, ?, ?, ?, CAST(? AS tsvector)) RETURNING seq`
	deleteItem = `DELETE FROM memory_items
		WHERE seq = ? AND uid = (SELECT uid FROM memory_users WHERE user_id = ?)
		RETURNING uid`
	ftsDelete = `DELETE FROM memory_fts WHERE rowid = ?`
)

// insert stores a memory of user uid and indexes it, and returns its
// sequence number.
func (s *Store) insert(ctx context.Context, tx *sql.Tx, uid int64, content, topicsJSON, tokens, topicTokens string, created int64) (int64, error) {
	var seq int64
	if s.db.Dialect() == store.Postgres {
		err := s.db.TxQueryRow(ctx, tx, insertPostgres, uid, content, topicsJSON, tokens, topicTokens, created,
			pgTerms(uid, tokens, topicTokens)).Scan(&seq)
		return seq, err
	}
	if err := s.db.TxQueryRow(ctx, tx, insertSQLite, uid, content, topicsJSON, tokens, topicTokens, created).Scan(&seq); err != nil {
		return 0, err
	}
	_, err := s.db.TxExec(ctx, tx, ftsInsert, seq, ftsTerms(uid, tokens), ftsTerms(uid, topicTokens))
	return seq, err
}

func checkUser(userID string) error {
	switch {
	case strings.TrimSpace(userID) == "":
		return fmt.Errorf("memory: %w: user_id is empty", ErrInvalid)
	case utf8.RuneCountInString(userID) > MaxUserIDLen:
		return fmt.Errorf("memory: %w: user_id is longer than %d characters", ErrInvalid, MaxUserIDLen)
	case !store.Storable(userID):
		return fmt.Errorf("memory: %w: user_id is not valid UTF-8 or holds a NUL character", ErrInvalid)
	}
	return nil
}

// cleanTopics trims the topics, drops empty and repeated ones and checks the
// limits.
func cleanTopics(topics []string) ([]string, error) {
	out := make([]string, 0, len(topics))
	for _, t := range topics {
		t = strings.TrimSpace(t)
		if t == "" || slices.Contains(out, t) {
			continue
		}
		if utf8.RuneCountInString(t) > MaxTopicRunes || !store.Storable(t) {
			return nil, fmt.Errorf("memory: %w: topic %q is longer than %d characters, not UTF-8 or holds a NUL character", ErrInvalid, t, MaxTopicRunes)
		}
		out = append(out, t)
	}
	if len(out) > MaxTopics {
		return nil, fmt.Errorf("memory: %w: %d topics, more than %d", ErrInvalid, len(out), MaxTopics)
	}
	return out, nil
}

// Search returns userID's memories that match query, best first, at most
// limit of them (DefaultLimit when limit <= 0, never more than MaxLimit).
// Memories that share no term with the query are not returned, so the
// result may be empty.
//
// The database ranks the memories that hold any of the query's terms, a
// topic hit counting topicWeight content hits: SQLite's FTS5 with bm25(),
// PostgreSQL with ts_rank() (see postgres.go). Relevance maps that to
// [0, 1]: the best memory's relevance is the share of the query (Latin
// words, CJK characters) its terms cover, and every other memory's is that
// times its score over the best one's.
func (s *Store) Search(ctx context.Context, userID, query string, limit int) ([]Hit, error) {
	if err := checkUser(userID); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(query) > MaxQueryRunes {
		return nil, fmt.Errorf("memory: %w: query is longer than %d characters", ErrInvalid, MaxQueryRunes)
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)

	spans, units := queryTerms(query)
	var terms []string
	for _, sp := range spans {
		if !slices.Contains(terms, sp.term) {
			if len(terms) == maxQueryTerms {
				break
			}
			terms = append(terms, sp.term)
		}
	}
	if len(terms) == 0 {
		return []Hit{}, nil
	}
	var uid int64
	err := s.db.QueryRowContext(ctx, `SELECT uid FROM memory_users WHERE user_id = ?`, userID).Scan(&uid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return []Hit{}, nil
	case err != nil:
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	search := sqliteSearch
	if s.db.Dialect() == store.Postgres {
		search = pgSearch
	}
	rows, err := search(ctx, s.db, uid, terms, limit)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	defer rows.Close()
	hits := []Hit{}
	var best, cover float64
	for rows.Next() {
		var seq int64
		var score float64
		var h Hit
		var topics, tokens, topicTokens string
		if err := rows.Scan(&seq, &score, &h.Memory, &topics, &tokens, &topicTokens); err != nil {
			return nil, fmt.Errorf("memory: search: %w", err)
		}
		if err := json.Unmarshal([]byte(topics), &h.Topics); err != nil {
			return nil, fmt.Errorf("memory: search: memory %d: topics: %w", seq, err)
		}
		if h.Topics == nil {
			h.Topics = []string{}
		}
		h.ID = idPrefix + strconv.FormatInt(seq, 10)
		if len(hits) == 0 {
			// The best comes first; score/best is in (0, 1] for bm25() (negative, lower is
			// better) and ts_rank() (positive, higher is better) alike.
			best, cover = score, coverage(spans, units, tokens+" "+topicTokens)
		}
		h.Relevance = cover
		if best != 0 {
			h.Relevance = min(1, max(0, cover*score/best))
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	return hits, nil
}

// coverage returns the share of the query's units (Latin words, CJK
// characters) covered by its terms that are among tokens.
func coverage(spans []span, units int, tokens string) float64 {
	if units == 0 {
		return 0
	}
	held := map[string]bool{}
	for _, t := range strings.Fields(tokens) {
		held[t] = true
	}
	covered := make([]bool, units)
	n := 0
	for _, sp := range spans {
		if !held[sp.term] {
			continue
		}
		for u := sp.first; u < sp.first+sp.n; u++ {
			if !covered[u] {
				covered[u] = true
				n++
			}
		}
	}
	return float64(n) / float64(units)
}

// Delete removes memory id of userID. It reports false, without error, when
// userID has no such memory: it never existed, was deleted, or is another
// user's.
func (s *Store) Delete(ctx context.Context, userID, id string) (bool, error) {
	if err := checkUser(userID); err != nil {
		return false, err
	}
	seq, ok := parseID(id)
	if !ok {
		return false, nil
	}
	tx, err := s.db.BeginWrite(ctx)
	if err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	defer tx.Rollback()
	var uid int64
	err = s.db.TxQueryRow(ctx, tx, deleteItem, seq, userID).Scan(&uid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	if s.db.Dialect() == store.SQLite {
		// PostgreSQL's index is the row's own column; FTS5's is a table of its own.
		if _, err := s.db.TxExec(ctx, tx, ftsDelete, seq); err != nil {
			return false, fmt.Errorf("memory: delete: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	return true, nil
}

// parseID returns the sequence number of a memory id.
func parseID(id string) (int64, bool) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok || rest == "" || rest[0] == '+' || rest[0] == '-' {
		return 0, false
	}
	seq, err := strconv.ParseInt(rest, 10, 64)
	return seq, err == nil && seq > 0
}
