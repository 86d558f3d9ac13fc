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

// ErrInvalid is input the Store refuses (an empty user, an oversized memory).
var ErrInvalid = errors.New("invalid input")

// idPrefix starts every memory id. The number after it is the row's
// sequence number, which SQLite never reuses (AUTOINCREMENT).
const idPrefix = "memory-"

// schema is the memory tables' migrations; see Migrate. Terms are kept in an
// inverted index (memory_terms) so that a search reads only the postings of
// its own terms; memory_users keeps each user's count and total length for
// the ranking's idf and average length.
var schema = []string{
	`CREATE TABLE memory_users (
		uid       INTEGER PRIMARY KEY,
		user_id   TEXT NOT NULL UNIQUE,
		memories  INTEGER NOT NULL,
		total_len INTEGER NOT NULL,
		version   INTEGER NOT NULL -- counts changes, for the cached index (index.go)
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
		doc_len    INTEGER NOT NULL, -- copied from memory_items: ranking reads only this table
		PRIMARY KEY (uid, term, seq)
	) WITHOUT ROWID;
	CREATE INDEX memory_terms_by_item ON memory_terms (seq);`,
}

// Store keeps users' memories in a database opened by OpenDB. It is safe for
// concurrent use.
type Store struct {
	db *sql.DB
	// mu makes this process's writes take turns instead of spinning on
	// SQLite's busy timeout; that timeout still covers other processes.
	mu sync.Mutex

	cacheMu   sync.Mutex
	cache     map[int64]*userIndex // by uid; see index.go
	cacheSize int                  // postings in cache
	maxCached int                  // bound of cacheSize: maxCachedPostings
	tick      uint64               // for cache's least recently used
}

// Hit is one memory Search found.
type Hit struct {
	ID        string   `json:"id"`
	Memory    string   `json:"memory"`
	Topics    []string `json:"topics"`
	Relevance float64  `json:"relevance"` // in [0, 1]; see the package documentation
}

// New returns a Store on db, creating or upgrading its tables. db stays the
// caller's to close.
func New(ctx context.Context, db *sql.DB) (*Store, error) {
	if err := Migrate(ctx, db, "memory", schema); err != nil {
		return nil, err
	}
	return &Store{db: db, cache: map[int64]*userIndex{}, maxCached: maxCachedPostings}, nil
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
	counts := map[string]int{}
	contentLen := docTerms(content, counts)
	topicCounts := map[string]int{}
	topicLen := 0
	for _, t := range topics {
		topicLen += docTerms(t, topicCounts)
	}
	docLen := contentLen + topicWeight*topicLen
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
	var uid, version int64
	err = tx.QueryRowContext(ctx, `INSERT INTO memory_users (user_id, memories, total_len, version) VALUES (?, 1, ?, 1)
		ON CONFLICT (user_id) DO UPDATE SET memories = memories + 1, total_len = total_len + excluded.total_len,
			version = version + 1
		RETURNING uid, version`, userID, docLen).Scan(&uid, &version)
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `INSERT INTO memory_items (uid, content, topics, doc_len, created_at)
		VALUES (?, ?, ?, ?, ?) RETURNING seq`, uid, content, string(topicsJSON), docLen, time.Now().UnixMilli()).Scan(&seq)
	if err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	if err := insertTerms(ctx, tx, uid, seq, docLen, counts, topicCounts); err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("memory: add: %w", err)
	}
	s.apply(change{uid: uid, version: version, seq: seq, docLen: docLen, added: true, content: counts, topics: topicCounts})
	return idPrefix + strconv.FormatInt(seq, 10), nil
}

// insertTerms writes a memory's postings, many rows per statement.
func insertTerms(ctx context.Context, tx *sql.Tx, uid, seq int64, docLen int, content, topics map[string]int) error {
	terms := make([]string, 0, len(content)+len(topics))
	for t := range content {
		terms = append(terms, t)
	}
	for t := range topics {
		if _, ok := content[t]; !ok {
			terms = append(terms, t)
		}
	}
	const perStatement = 200 // 6 parameters each, far below SQLite's limit
	for chunk := range slices.Chunk(terms, perStatement) {
		var q strings.Builder
		q.WriteString(`INSERT INTO memory_terms (uid, term, seq, tf_content, tf_topic, doc_len) VALUES `)
		args := make([]any, 0, 6*len(chunk))
		for i, t := range chunk {
			if i > 0 {
				q.WriteString(",")
			}
			q.WriteString("(?,?,?,?,?,?)")
			args = append(args, uid, t, seq, content[t], topics[t], docLen)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
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
// Memories that share nothing with the query are not returned, so the
// result may be empty. The ranking is described in rank.go.
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
	index := map[string]int{}
	var terms []string
	var termIdx []int
	for _, sp := range spans {
		i, ok := index[sp.term]
		if !ok {
			if len(terms) == maxQueryTerms {
				break
			}
			i = len(terms)
			index[sp.term] = i
			terms = append(terms, sp.term)
		}
		termIdx = append(termIdx, i)
	}
	spans = spans[:len(termIdx)]
	if len(terms) == 0 {
		return []Hit{}, nil
	}

	var uid, version int64
	err := s.db.QueryRowContext(ctx, `SELECT uid, version FROM memory_users WHERE user_id = ?`, userID).Scan(&uid, &version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return []Hit{}, nil
	case err != nil:
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	idx, err := s.index(ctx, uid, version, terms)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	ranked := idx.top(spans, units, termIdx, terms, limit)
	if len(ranked) == 0 {
		return []Hit{}, nil
	}
	seqs := make([]int64, len(ranked))
	for i, sc := range ranked {
		seqs[i] = sc.seq
	}
	items, err := s.items(ctx, uid, seqs)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	hits := make([]Hit, 0, len(ranked))
	for _, sc := range ranked {
		h, ok := items[sc.seq]
		if !ok {
			continue // deleted since the postings were read
		}
		h.Relevance = sc.relevance
		hits = append(hits, h)
	}
	return hits, nil
}

// items reads the memories seqs of user uid.
func (s *Store) items(ctx context.Context, uid int64, seqs []int64) (map[int64]Hit, error) {
	q := `SELECT seq, content, topics FROM memory_items WHERE uid = ? AND seq IN (` +
		strings.Repeat("?,", len(seqs)-1) + `?)`
	args := make([]any, 0, 1+len(seqs))
	args = append(args, uid)
	for _, seq := range seqs {
		args = append(args, seq)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]Hit, len(seqs))
	for rows.Next() {
		var seq int64
		var h Hit
		var topics string
		if err := rows.Scan(&seq, &h.Memory, &topics); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(topics), &h.Topics); err != nil {
			return nil, fmt.Errorf("memory %d: topics: %w", seq, err)
		}
		if h.Topics == nil {
			h.Topics = []string{}
		}
		h.ID = idPrefix + strconv.FormatInt(seq, 10)
		out[seq] = h
	}
	return out, rows.Err()
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
	// Write first, so the transaction holds the write lock from its first
	// statement (see Migrate). The terms go before the item, so that ON
	// DELETE CASCADE has nothing left to do and RETURNING sees them all.
	terms, err := deleteTerms(ctx, tx, seq, userID)
	if err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	var uid, docLen int64
	err = tx.QueryRowContext(ctx, `DELETE FROM memory_items
		WHERE seq = ? AND uid = (SELECT uid FROM memory_users WHERE user_id = ?)
		RETURNING uid, doc_len`, seq, userID).Scan(&uid, &docLen)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil // the deferred Rollback keeps the terms
	case err != nil:
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	var version int64
	if err := tx.QueryRowContext(ctx, `UPDATE memory_users SET memories = memories - 1, total_len = total_len - ?,
		version = version + 1 WHERE uid = ? RETURNING version`, docLen, uid).Scan(&version); err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("memory: delete: %w", err)
	}
	s.apply(change{uid: uid, version: version, seq: seq, docLen: int(docLen), terms: terms})
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

// deleteTerms deletes the postings of memory seq when it is userID's, and
// returns their terms.
func deleteTerms(ctx context.Context, tx *sql.Tx, seq int64, userID string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `DELETE FROM memory_terms
		WHERE seq = ? AND uid = (SELECT uid FROM memory_users WHERE user_id = ?)
		RETURNING term`, seq, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var terms []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	return terms, rows.Err()
}
