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
	"sync"
	"time"
	"unicode/utf8"
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
// sequence number, which SQLite never reuses (AUTOINCREMENT).
const idPrefix = "memory-"

// schema is the memory tables' migrations; see Migrate. Version 1 kept a
// hand-made inverted index (memory_terms) and per-user statistics for its
// ranker; version 2 replaces them with FTS5.
var schema = []Step{
	sqlStep(`CREATE TABLE memory_users (
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
	CREATE INDEX memory_terms_by_item ON memory_terms (seq);`),
	toFTS,
}

// ftsTable indexes the memories' terms. It is contentless (the text is in
// memory_items) and the ascii tokenizer splits only at ASCII punctuation and
// spaces, which no term holds, so the terms are indexed exactly as
// tokenize.go made them (unicode61 would fold diacritics and split at
// combining marks). '_' joins a term to its user's uid (see ftsTerms). The
// default detail=full and columnsize stay: bm25() needs each term's count
// and each memory's length (with detail=column it ranks wrongly).
const ftsTable = `CREATE VIRTUAL TABLE memory_fts USING fts5 (
	tokens, topics,
	content = '', contentless_delete = 1,
	tokenize = "ascii tokenchars '_'"
)`

// toFTS replaces the hand-made inverted index of version 1 with the terms
// column and the FTS5 table, built from the existing memories.
func toFTS(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		`DROP TABLE memory_terms`,
		`ALTER TABLE memory_items DROP COLUMN doc_len`,
		`ALTER TABLE memory_users DROP COLUMN memories`,
		`ALTER TABLE memory_users DROP COLUMN total_len`,
		`ALTER TABLE memory_users DROP COLUMN version`,
		`ALTER TABLE memory_items ADD COLUMN tokens TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE memory_items ADD COLUMN topic_tokens TEXT NOT NULL DEFAULT ''`,
		ftsTable,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	const batch = 500
	for after := int64(0); ; {
		type row struct {
			seq, uid        int64
			content, topics string
		}
		var rows []row
		err := func() error {
			rs, err := tx.QueryContext(ctx, `SELECT seq, uid, content, topics FROM memory_items
				WHERE seq > ? ORDER BY seq LIMIT ?`, after, batch)
			if err != nil {
				return err
			}
			defer rs.Close()
			for rs.Next() {
				var r row
				if err := rs.Scan(&r.seq, &r.uid, &r.content, &r.topics); err != nil {
					return err
				}
				rows = append(rows, r)
			}
			return rs.Err()
		}()
		if err != nil || len(rows) == 0 {
			return err
		}
		for _, r := range rows {
			var topics []string
			if err := json.Unmarshal([]byte(r.topics), &topics); err != nil {
				return fmt.Errorf("memory %d: topics: %w", r.seq, err)
			}
			tokens, topicTokens := memoryTokens(r.content, topics)
			if _, err := tx.ExecContext(ctx, `UPDATE memory_items SET tokens = ?, topic_tokens = ? WHERE seq = ?`,
				tokens, topicTokens, r.seq); err != nil {
				return err
			}
			if err := indexMemory(ctx, tx, r.uid, r.seq, tokens, topicTokens); err != nil {
				return err
			}
			after = r.seq
		}
	}
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

// indexMemory adds memory seq to the FTS table.
func indexMemory(ctx context.Context, tx *sql.Tx, uid, seq int64, tokens, topicTokens string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memory_fts (rowid, tokens, topics) VALUES (?, ?, ?)`,
		seq, ftsTerms(uid, tokens), ftsTerms(uid, topicTokens))
	return err
}

// Store keeps users' memories in a database opened by OpenDB. It is safe for
// concurrent use.
type Store struct {
	db *sql.DB
	// mu makes this process's writes take turns instead of spinning on
	// SQLite's busy timeout; that timeout still covers other processes.
	mu sync.Mutex
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
func New(ctx context.Context, db *sql.DB) (*Store, error) {
	if err := MigrateSteps(ctx, db, "memory", schema); err != nil {
		return nil, err
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
	case !utf8.ValidString(content):
		return "", fmt.Errorf("memory: %w: content is not valid UTF-8", ErrInvalid)
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

	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	defer tx.Rollback() // after Commit it does nothing
	var uid int64
	// DO UPDATE, not DO NOTHING, so that RETURNING gives an existing uid.
	err = tx.QueryRowContext(ctx, `INSERT INTO memory_users (user_id) VALUES (?)
		ON CONFLICT (user_id) DO UPDATE SET user_id = excluded.user_id
		RETURNING uid`, userID).Scan(&uid)
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `INSERT INTO memory_items (uid, content, topics, tokens, topic_tokens, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, uid, content, string(topicsJSON), tokens, topicTokens,
		time.Now().UnixMilli()).Scan(&seq)
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	if err := indexMemory(ctx, tx, uid, seq, tokens, topicTokens); err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	return idPrefix + strconv.FormatInt(seq, 10), nil
}

func checkUser(userID string) error {
	switch {
	case strings.TrimSpace(userID) == "":
		return fmt.Errorf("memory: %w: user_id is empty", ErrInvalid)
	case utf8.RuneCountInString(userID) > MaxUserIDLen:
		return fmt.Errorf("memory: %w: user_id is longer than %d characters", ErrInvalid, MaxUserIDLen)
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
		if utf8.RuneCountInString(t) > MaxTopicRunes || !utf8.ValidString(t) {
			return nil, fmt.Errorf("memory: %w: topic %q is longer than %d characters or not UTF-8", ErrInvalid, t, MaxTopicRunes)
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
// FTS5 ranks the memories that hold any of the query's terms with bm25(),
// a topic hit counting topicWeight content hits. Relevance maps that to
// [0, 1]: the best memory's relevance is the share of the query (Latin
// words, CJK characters) its terms cover, and every other memory's is that
// times its bm25 score over the best one's.
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
	// Every term is quoted, so nothing in the user's text is FTS5 syntax;
	// the uid prefix keeps the match to the user's own memories, and the
	// join on uid makes sure of it.
	match := make([]string, len(terms))
	for i, t := range terms {
		match[i] = `"` + strings.ReplaceAll(ftsTerms(uid, t), `"`, `""`) + `"`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT f.rowid, f.score, i.content, i.topics, i.tokens, i.topic_tokens
		FROM (SELECT rowid, bm25(memory_fts, 1, ?) AS score FROM memory_fts
			WHERE memory_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?) AS f
		JOIN memory_items AS i ON i.seq = f.rowid AND i.uid = ?
		ORDER BY f.score, f.rowid DESC`, topicWeight, strings.Join(match, " OR "), limit, uid)
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
			// bm25() is negative, lower is better.
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
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	defer tx.Rollback()
	var uid int64
	err = tx.QueryRowContext(ctx, `DELETE FROM memory_items
		WHERE seq = ? AND uid = (SELECT uid FROM memory_users WHERE user_id = ?)
		RETURNING uid`, seq, userID).Scan(&uid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_fts WHERE rowid = ?`, seq); err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
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
