package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
)

// Two Stores on two connections to one file behave as two processes: each
// sees the other's writes although both cache their users' indexes.
func TestIndexSeesOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	open := func() *Store {
		db, err := OpenDB(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := New(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open(), open()
	mustAdd(t, a, "u", "用户喜欢科技")
	if got := memories(search(t, a, "u", "喜欢", 5)); len(got) != 1 { // a's index is loaded now
		t.Fatalf("a: %q", got)
	}
	id := mustAdd(t, b, "u", "用户喜欢音乐")
	if got := memories(search(t, a, "u", "音乐", 5)); len(got) != 1 || got[0] != "用户喜欢音乐" {
		t.Errorf("a does not see b's memory: %q", got)
	}
	mustAdd(t, a, "u", "用户喜欢旅行") // a's index was reloaded: it applies its own write
	if ok, err := b.Delete(context.Background(), "u", id); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for _, s := range []*Store{a, b} {
		if got := memories(search(t, s, "u", "喜欢", 5)); len(got) != 2 {
			t.Errorf("after b's delete: %q", got)
		}
	}
}

// The cached index, updated in place by Add and Delete, ranks exactly as
// one loaded afresh from the database.
func TestIndexMatchesDatabase(t *testing.T) {
	s, db, _ := newStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"用户", "喜欢", "科技", "音乐", "旅行", "咖啡", "周末", "上海", "coffee", "music", "hiking"}
	var ids []string
	queries := []string{"用户对什么话题感兴趣", "周末去上海旅行", "music and coffee", "喜欢科技"}
	for i := range 300 {
		if len(ids) > 0 && rng.IntN(4) == 0 {
			k := rng.IntN(len(ids))
			if ok, err := s.Delete(ctx, "u", ids[k]); !ok || err != nil {
				t.Fatal(ok, err)
			}
			ids = append(ids[:k], ids[k+1:]...)
		} else {
			text := ""
			for range 2 + rng.IntN(6) {
				text += words[rng.IntN(len(words))] + " "
			}
			ids = append(ids, mustAdd(t, s, "u", text, words[rng.IntN(len(words))]))
		}
		if i%40 == 0 {
			// Load the terms of one query more, to be updated in place from now on.
			search(t, s, "u", queries[(i/40)%len(queries)], 5)
		}
	}
	fresh, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		got, want := search(t, s, "u", q, MaxLimit), search(t, fresh, "u", q, MaxLimit)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: cached index ranks\n%v\nfresh one\n%v", q, got, want)
		}
	}
	var version int64
	if err := db.QueryRow(`SELECT version FROM memory_users WHERE user_id = 'u'`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if s.cached(mustUID(t, s, "u"), version) == nil {
		t.Error("the index is not cached at the database's version")
	}
	if s.cached(mustUID(t, s, "u"), version+1) != nil {
		t.Error("cached returned an index older than asked for")
	}
}

func mustUID(t *testing.T, s *Store, user string) int64 {
	t.Helper()
	var uid int64
	if err := s.db.QueryRow(`SELECT uid FROM memory_users WHERE user_id = ?`, user).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	return uid
}

func TestIndexEviction(t *testing.T) {
	s, _, _ := newStore(t)
	for u := range 4 {
		for i := range 5 {
			mustAdd(t, s, fmt.Sprint("user-", u), fmt.Sprintf("用户喜欢第%d个话题", i))
		}
	}
	s.maxCached = 8 // postings: one user's 话题 (5), not two
	for range 2 {
		for u := range 4 {
			user := fmt.Sprint("user-", u)
			if got := search(t, s, user, "话题", 10); len(got) != 5 {
				t.Errorf("%s: %d hits; want 5", user, len(got))
			}
		}
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	total := 0
	for _, idx := range s.cache {
		total += idx.size
	}
	if total != s.cacheSize {
		t.Errorf("cacheSize %d; the indexes hold %d", s.cacheSize, total)
	}
	if len(s.cache) >= 4 || s.cacheSize > s.maxCached {
		t.Errorf("%d users, %d postings cached; want fewer than 4 users within %d", len(s.cache), s.cacheSize, s.maxCached)
	}
	if _, ok := s.cache[mustUID(t, s, "user-3")]; !ok {
		t.Error("the user searched last was evicted")
	}
}
