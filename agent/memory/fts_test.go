package memory

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
)

// The index (SQLite's FTS table, PostgreSQL's tsvector column) holds each
// memory's terms exactly as tokenize.go made them: no folding of diacritics
// or case beyond ours, no split at combining marks.
func TestFTSKeepsTerms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, db := newStore(t, where)
		// café with a combining accent, a titlecase digraph, Greek, Cyrillic,
		// kana, Hangul, fullwidth digits.
		content := "cafe\u0301 ǅemal ΣΟΦΙΑ Москва カタカナ 한국어 ２０２３年"
		id := mustAdd(t, s, "u", content, "Ünïcode")
		seq, _ := parseID(id)
		var tokens, topicTokens string
		if err := db.QueryRow(`SELECT tokens, topic_tokens FROM memory_items WHERE seq = ?`, seq).Scan(&tokens, &topicTokens); err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(docTokens(content), " "); tokens != want {
			t.Errorf("tokens column %q; want %q", tokens, want)
		}
		uid := mustUID(t, s, "u")
		want := map[string]bool{}
		for _, tok := range strings.Fields(tokens + " " + topicTokens) {
			want[ftsTerms(uid, tok)] = true
		}
		query := `SELECT unnest(tsvector_to_array(terms)) FROM memory_items`
		if db.Dialect() == store.SQLite {
			if _, err := db.Exec(`CREATE VIRTUAL TABLE temp.fts_terms USING fts5vocab(main, memory_fts, 'row')`); err != nil {
				t.Fatal(err)
			}
			query = `SELECT term FROM temp.fts_terms`
		}
		rows, err := db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]bool{}
		for rows.Next() {
			var term string
			if err := rows.Scan(&term); err != nil {
				t.Fatal(err)
			}
			got[term] = true
		}
		if len(got) != len(want) {
			t.Errorf("the FTS table holds %d terms; want %d", len(got), len(want))
		}
		for term := range got {
			if !want[term] {
				t.Errorf("the FTS table holds %q, which is no term of the memory", term)
			}
		}
		for _, q := range []string{"cafe\u0301", "ǆemal", "σοφια", "москва", "カタ", "한국", "2023"} {
			if got := search(t, s, "u", q, 5); len(got) != 1 || got[0].ID != id {
				t.Errorf("Search(%q) = %+v; want %s", q, got, id)
			}
		}
		// Folding that tokenize.go does not do is not done by the index either.
		for _, q := range []string{"cafe", "Unicode"} {
			if got := search(t, s, "u", q, 5); len(got) != 0 {
				t.Errorf("Search(%q) = %+v; want nothing", q, got)
			}
		}
	})
}

// A query is only ever words to look for: FTS5's operators in it are inert.
func TestSearchQuerySyntaxInert(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		tech := mustAdd(t, s, "u", "用户喜欢科技 near the sea")
		mustAdd(t, s, "u", "用户讨厌下雨")
		for _, q := range []string{
			`科技"`,
			`"科技`,
			`科技*`,
			`科* OR 技`,
			`NEAR(科技 sea)`,
			`near`,
			`-科技`,
			`tokens:科技`,
			`{tokens topics}: 科技`,
			`(科技) AND (sea)`,
			`^科技 + sea`,
			`sea NOT 科技`,
		} {
			hits, err := s.Search(context.Background(), "u", q, 5)
			if err != nil {
				t.Errorf("Search(%q): %v", q, err)
				continue
			}
			if len(hits) == 0 || hits[0].ID != tech {
				t.Errorf("Search(%q) = %q; want %s first", q, memories(hits), tech)
			}
		}
		// Only operators and punctuation: no terms, no hits, no error.
		for _, q := range []string{`"`, `*`, `()`, `-`, `:`, `" OR "`, `AND OR NOT`} {
			if got := search(t, s, "u", q, 5); len(got) != 0 {
				t.Errorf("Search(%q) = %q; want nothing", q, memories(got))
			}
		}
	})
}

// bm25's document frequencies are each user's own: what bob's memories say
// does not change alice's ranking or relevance.
func TestPerUserStatistics(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d.String(), func(t *testing.T) { perUserStatistics(t, d) })
	}
}

func perUserStatistics(t *testing.T, d store.Dialect) {
	{
		relevances := func(bobSays string) []float64 {
			s, _ := newStore(t, storetest.Where(t, d))
			mustAdd(t, s, "alice", "用户喜欢科技相关话题", "科技")
			mustAdd(t, s, "alice", "用户每天看新闻", "新闻")
			mustAdd(t, s, "alice", "用户喜欢音乐")
			for range 20 {
				mustAdd(t, s, "bob", bobSays)
			}
			var out []float64
			for _, h := range search(t, s, "alice", "科技新闻和音乐", 5) {
				out = append(out, h.Relevance)
			}
			return out
		}
		// Same lengths, different words: only the words' frequencies differ.
		same, other := relevances("今天天气"), relevances("科技新闻")
		if len(same) != 3 || !slices.Equal(same, other) {
			t.Errorf("alice's relevances %v when bob talks of the weather, %v when of 科技新闻", same, other)
		}
	}
}

// Two Stores on two DBs of one database behave as two processes: each sees
// the other's writes at once.
func TestSeesOtherWriters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) { seesOtherWriters(t, where) })
}

func seesOtherWriters(t *testing.T, where string) {
	open := func() *Store {
		s, _ := newStore(t, where)
		return s
	}
	a, b := open(), open()
	mustAdd(t, a, "u", "用户喜欢科技")
	if got := memories(search(t, a, "u", "喜欢", 5)); len(got) != 1 {
		t.Fatalf("a: %q", got)
	}
	id := mustAdd(t, b, "u", "用户喜欢音乐")
	if got := memories(search(t, a, "u", "音乐", 5)); len(got) != 1 || got[0] != "用户喜欢音乐" {
		t.Errorf("a does not see b's memory: %q", got)
	}
	mustAdd(t, a, "u", "用户喜欢旅行")
	if ok, err := b.Delete(context.Background(), "u", id); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, s := range []*Store{a, b} {
		if got := memories(search(t, s, "u", "喜欢", 5)); len(got) != 2 {
			t.Errorf("after b's delete: %q", got)
		}
	}
}

// A SQLite database of the hand-made index (schema version 1) is migrated
// at start: its memories are found, deleted and counted on from as before.
func TestMigrateFromVersion1(t *testing.T) {
	db := storetest.Open(t, storetest.Where(t, store.SQLite))
	ctx := context.Background()
	if err := db.Migrate(ctx, "memory", store.Schema{SQLite: schema.SQLite[:1]}); err != nil {
		t.Fatal(err)
	}
	// Rows as version 1 wrote them (its postings are not needed: the
	// migration drops them).
	old := []struct {
		user, content string
		topics        []string
	}{
		{"user-123", "用户住在上海", []string{"住址"}},
		{"user-123", "用户喜欢科技相关话题", []string{"兴趣", "偏好", "科技"}},
		{"user-456", "用户喜欢科技相关话题", []string{"科技"}},
		{"user-123", "The user likes hiking", nil},
	}
	for _, m := range old {
		topics, _ := json.Marshal(m.topics)
		if _, err := db.Exec(`INSERT INTO memory_users (user_id, memories, total_len, version) VALUES (?, 0, 0, 0)
			ON CONFLICT DO NOTHING`, m.user); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO memory_items (uid, content, topics, doc_len, created_at)
			VALUES ((SELECT uid FROM memory_users WHERE user_id = ?), ?, ?, 1, 0)`, m.user, m.content, string(topics)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	hits := search(t, s, "user-123", "用户对什么话题感兴趣", 5)
	if len(hits) != 2 || hits[0].ID != "memory-2" || !slices.Equal(hits[0].Topics, old[1].topics) || hits[1].ID != "memory-1" {
		t.Errorf("after migrating: %+v", hits)
	}
	if got := search(t, s, "user-123", "hikes", 5); len(got) != 1 || got[0].ID != "memory-4" {
		t.Errorf("English after migrating: %+v", got)
	}
	if got := search(t, s, "user-456", "科技", 5); len(got) != 1 || got[0].ID != "memory-3" {
		t.Errorf("user-456 after migrating: %+v", got)
	}
	if ok, err := s.Delete(ctx, "user-123", "memory-2"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := memories(search(t, s, "user-123", "科技", 5)); len(got) != 0 {
		t.Errorf("a migrated memory survived its delete: %q", got)
	}
	if id := mustAdd(t, s, "user-123", "x"); id != "memory-5" {
		t.Errorf("new id %s; want memory-5", id)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'memory_terms'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("memory_terms still there: %d, %v", n, err)
	}
	var version int
	if err := db.QueryRow(`SELECT version FROM schema_migrations WHERE component = 'memory'`).Scan(&version); err != nil || version != len(schema.SQLite) {
		t.Errorf("version %d, %v; want %d", version, err, len(schema.SQLite))
	}
}

func mustUID(t testing.TB, s *Store, user string) int64 {
	t.Helper()
	var uid int64
	if err := s.db.QueryRow(`SELECT uid FROM memory_users WHERE user_id = ?`, user).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	return uid
}

func TestFTSTerms(t *testing.T) {
	for _, tc := range []struct{ tokens, want string }{
		{"", ""},
		{"用户", "7_用户"},
		{"用户 hik 2023", "7_用户 7_hik 7_2023"},
	} {
		if got := ftsTerms(7, tc.tokens); got != tc.want {
			t.Errorf("ftsTerms(7, %q) = %q; want %q", tc.tokens, got, tc.want)
		}
	}
}
