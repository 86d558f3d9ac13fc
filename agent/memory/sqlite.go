package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/devicectl/devicectl/agent/store"
)

// The SQLite index: a contentless FTS5 table of each memory's terms,
// ranked with bm25().

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

// ftsInsert adds a memory's terms to the FTS table: its seq, then its
// content's and its topics' terms (ftsTerms).
const ftsInsert = `INSERT INTO memory_fts (rowid, tokens, topics) VALUES (?, ?, ?)`

// indexMemory adds memory seq to the FTS table.
func indexMemory(ctx context.Context, tx *sql.Tx, uid, seq int64, tokens, topicTokens string) error {
	_, err := tx.ExecContext(ctx, ftsInsert, seq, ftsTerms(uid, tokens), ftsTerms(uid, topicTokens))
	return err
}

// sqliteSearch finds user uid's memories that hold any of terms with FTS5,
// best first: seq, bm25 score, content, topics, tokens, topic_tokens.
// Every term is quoted, so nothing in the user's text is FTS5 syntax; the
// uid prefix keeps the match to the user's own memories, and the join on
// uid makes sure of it.
func sqliteSearch(ctx context.Context, db *store.DB, uid int64, terms []string, limit int) (*sql.Rows, error) {
	match := make([]string, len(terms))
	for i, t := range terms {
		match[i] = `"` + strings.ReplaceAll(ftsTerms(uid, t), `"`, `""`) + `"`
	}
	return db.QueryContext(ctx, `SELECT f.rowid, f.score, i.content, i.topics, i.tokens, i.topic_tokens
		FROM (SELECT rowid, bm25(memory_fts, 1, ?) AS score FROM memory_fts
			WHERE memory_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?) AS f
		JOIN memory_items AS i ON i.seq = f.rowid AND i.uid = ?
		ORDER BY f.score, f.rowid DESC`, topicWeight, strings.Join(match, " OR "), limit, uid)
}
