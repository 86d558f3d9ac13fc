package memory

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/store/storetest"
)

// newStore opens a Store on the database where names (storetest.Where).
func newStore(t testing.TB, where string) (*Store, *store.DB) {
	t.Helper()
	db := storetest.Open(t, where)
	s, err := New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

func mustAdd(t testing.TB, s *Store, user, content string, topics ...string) string {
	t.Helper()
	id, err := s.Add(context.Background(), user, content, topics)
	if err != nil {
		t.Fatalf("Add(%q, %q): %v", user, content, err)
	}
	return id
}

func search(t testing.TB, s *Store, user, query string, limit int) []Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), user, query, limit)
	if err != nil {
		t.Fatalf("Search(%q, %q): %v", user, query, err)
	}
	for i, h := range hits {
		if !(h.Relevance > 0 && h.Relevance <= 1) {
			t.Errorf("Search(%q): hit %d relevance %v is not in (0, 1]", query, i, h.Relevance)
		}
		if i > 0 && h.Relevance > hits[i-1].Relevance {
			t.Errorf("Search(%q): hit %d (%v) ranks below a less relevant one (%v)", query, i, h.Relevance, hits[i-1].Relevance)
		}
	}
	return hits
}

func memories(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Memory
	}
	return out
}

var idPattern = regexp.MustCompile(`^memory-[1-9][0-9]*$`)

// The seed's own example, among memories it must not prefer.
func TestSeedExample(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		mustAdd(t, s, "user-123", "用户住在上海", "住址")
		id := mustAdd(t, s, "user-123", "用户喜欢科技相关话题", "兴趣", "偏好", "科技")
		mustAdd(t, s, "user-123", "用户的生日是五月三日", "生日")
		mustAdd(t, s, "user-456", "用户喜欢科技相关话题", "兴趣", "偏好", "科技")
		if !idPattern.MatchString(id) {
			t.Errorf("id %q does not look like memory-<n>", id)
		}
		hits := search(t, s, "user-123", "用户对什么话题感兴趣", 5)
		if len(hits) == 0 {
			t.Fatal("the seed's query found nothing")
		}
		want := Hit{ID: id, Memory: "用户喜欢科技相关话题", Topics: []string{"兴趣", "偏好", "科技"}}
		got := hits[0]
		if got.ID != want.ID || got.Memory != want.Memory || !slices.Equal(got.Topics, want.Topics) || got.Relevance <= 0 {
			t.Errorf("best hit %+v; want %+v with relevance > 0", got, want)
		}
		for _, h := range hits[1:] {
			if h.Relevance >= got.Relevance {
				t.Errorf("%q ranks with the seed's memory: %v >= %v", h.Memory, h.Relevance, got.Relevance)
			}
		}
	})
}

func TestSearchChineseAndEnglish(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		mustAdd(t, s, "u", "我喜欢科技")
		mustAdd(t, s, "u", "我讨厌下雨天")
		mustAdd(t, s, "u", "用户问过什么是量子计算") // holds 什么, which is no reason to match
		mustAdd(t, s, "u", "The user likes hiking in the mountains", "hobby")
		mustAdd(t, s, "u", "The user's dog is called Max", "pets")
		mustAdd(t, s, "u", "用户在学习 Go 语言", "programming")
		for _, tc := range []struct {
			query string
			want  []string // exactly these, best first
		}{
			{"我喜欢什么", []string{"我喜欢科技"}},
			{"什么", nil}, // only a function word: nothing, not everything
			{"天气怎么样，下雨吗", []string{"我讨厌下雨天"}}, // 下雨
			{"量子", []string{"用户问过什么是量子计算"}},
			// "user" is in both; "like" only in the first.
			{"What does the user like?", []string{"The user likes hiking in the mountains", "The user's dog is called Max"}},
			{"hobbies", []string{"The user likes hiking in the mountains"}}, // a topic, folded
			{"dog's name", []string{"The user's dog is called Max"}},
			{"go programming", []string{"用户在学习 Go 语言"}},
			{"学习", []string{"用户在学习 Go 语言"}},
			{"苹果", nil},
			{"", nil},
		} {
			got := memories(search(t, s, "u", tc.query, 10))
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("Search(%q) = %q; want %q", tc.query, got, tc.want)
			}
		}
	})
}

func TestTopicHitCountsMore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		// Same content length; one holds 旅行 as a topic, one in its text.
		// The text hit comes last, so that it would win a tie (the newest first).
		inTopic := mustAdd(t, s, "u", "周末计划出门", "旅行")
		topicOnly := mustAdd(t, s, "u", "想去看看大海", "旅行")
		inText := mustAdd(t, s, "u", "周末计划旅行", "计划")
		hits := search(t, s, "u", "旅行", 5)
		ids := []string{}
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		if len(ids) != 3 || ids[2] != inText || !slices.Contains(ids[:2], inTopic) || !slices.Contains(ids[:2], topicOnly) {
			t.Errorf("order %v (%v); want the topic hits %s and %s before the text hit %s", ids, memories(hits), inTopic, topicOnly, inText)
		}
		if hits[0].Relevance != 1 {
			t.Errorf("a query that is exactly a topic: relevance %v; want 1", hits[0].Relevance)
		}
	})
}

func TestRankingOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		both := mustAdd(t, s, "u", "用户关注科技新闻")
		one := mustAdd(t, s, "u", "用户每天看新闻")
		long := mustAdd(t, s, "u", "用户每天早上喝咖啡，中午散步，晚上读小说，周末和朋友打球，偶尔看新闻")
		mustAdd(t, s, "u", "用户养了一只猫")
		hits := search(t, s, "u", "科技新闻", 10)
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		if want := []string{both, one, long}; !slices.Equal(ids, want) {
			t.Errorf("order %v %q; want %v (both terms, one term in a short memory, one term in a long one)", ids, memories(hits), want)
		}
	})
}

func TestLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		for i := range 60 {
			mustAdd(t, s, "u", fmt.Sprintf("用户喜欢第%d种水果", i))
		}
		for _, tc := range []struct{ limit, want int }{{0, DefaultLimit}, {-1, DefaultLimit}, {1, 1}, {7, 7}, {50, 50}, {100, MaxLimit}} {
			if got := len(search(t, s, "u", "水果", tc.limit)); got != tc.want {
				t.Errorf("limit %d: %d hits; want %d", tc.limit, got, tc.want)
			}
		}
	})
}

func TestPerUser(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		alice := mustAdd(t, s, "alice", "用户喜欢科技相关话题", "科技")
		if got := search(t, s, "bob", "科技", 5); len(got) != 0 {
			t.Errorf("bob finds alice's memories: %+v", got)
		}
		ok, err := s.Delete(context.Background(), "bob", alice)
		if err != nil || ok {
			t.Errorf("bob deletes alice's memory: %v, %v; want false, nil", ok, err)
		}
		if got := search(t, s, "alice", "科技", 5); len(got) != 1 || got[0].ID != alice {
			t.Errorf("alice's memory after bob's delete: %+v", got)
		}
		// Users' statistics are their own: bob's many memories of 科技 do not
		// make it common for alice.
		for range 20 {
			mustAdd(t, s, "bob", "科技")
		}
		before := search(t, s, "alice", "科技 话题", 5)
		mustAdd(t, s, "bob", "话题")
		after := search(t, s, "alice", "科技 话题", 5)
		if before[0].Relevance != after[0].Relevance {
			t.Errorf("bob's memories changed alice's relevance: %v -> %v", before[0].Relevance, after[0].Relevance)
		}
	})
}

func TestDelete(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		ctx := context.Background()
		id := mustAdd(t, s, "u", "用户喜欢科技", "科技")
		keep := mustAdd(t, s, "u", "用户喜欢音乐", "音乐")
		for _, bad := range []string{"", "memory-", "memory-0", "memory--1", "memory-+1", "memory-x", "memory-99", "456", strings.TrimPrefix(id, "memory-")} {
			if ok, err := s.Delete(ctx, "u", bad); ok || err != nil {
				t.Errorf("Delete(%q) = %v, %v; want false, nil", bad, ok, err)
			}
		}
		if ok, err := s.Delete(ctx, "u", id); !ok || err != nil {
			t.Fatalf("Delete(%q) = %v, %v; want true, nil", id, ok, err)
		}
		if ok, err := s.Delete(ctx, "u", id); ok || err != nil {
			t.Errorf("second Delete(%q) = %v, %v; want false, nil", id, ok, err)
		}
		if got := memories(search(t, s, "u", "喜欢", 5)); !slices.Equal(got, []string{"用户喜欢音乐"}) {
			t.Errorf("after delete: %q", got)
		}
		if _, err := s.Delete(ctx, "", keep); !errors.Is(err, ErrInvalid) {
			t.Errorf("Delete with no user: %v; want ErrInvalid", err)
		}
		if ok, _ := s.Delete(ctx, "u", keep); !ok {
			t.Fatal("deleting the last memory failed")
		}
		if got := search(t, s, "u", "喜欢", 5); len(got) != 0 {
			t.Errorf("no memories left, yet: %+v", got)
		}
		// Ids are never reused, not even the last one's.
		if again := mustAdd(t, s, "u", "用户喜欢科技"); again == id || again == keep {
			t.Errorf("a new memory got a deleted one's id %s", again)
		}
	})
}

func TestSurvivesRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, db := newStore(t, where)
		id := mustAdd(t, s, "user-123", "用户喜欢科技相关话题", "兴趣", "偏好", "科技")
		gone := mustAdd(t, s, "user-123", "用户住在上海")
		if ok, err := s.Delete(context.Background(), "user-123", gone); !ok || err != nil {
			t.Fatal(ok, err)
		}
		before := search(t, s, "user-123", "用户对什么话题感兴趣", 5)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		s, _ = newStore(t, where)
		after := search(t, s, "user-123", "用户对什么话题感兴趣", 5)
		if len(after) != 1 || after[0].ID != id || after[0].Relevance != before[0].Relevance ||
			!slices.Equal(after[0].Topics, []string{"兴趣", "偏好", "科技"}) {
			t.Errorf("after reopening: %+v; before: %+v", after, before)
		}
		if got := search(t, s, "user-123", "上海", 5); len(got) != 0 {
			t.Errorf("a deleted memory came back: %+v", got)
		}
		if next := mustAdd(t, s, "user-123", "x"); next <= id && len(next) == len(id) {
			t.Errorf("id after reopening %s; want one after %s", next, gone)
		}
	})
}

func TestAddRefuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		ctx := context.Background()
		tooManyTopics := make([]string, MaxTopics+1)
		for i := range tooManyTopics {
			tooManyTopics[i] = fmt.Sprint("t", i)
		}
		for _, tc := range []struct {
			name, user, content string
			topics              []string
		}{
			{"no user", "", "x", nil},
			{"blank user", "  ", "x", nil},
			{"long user", strings.Repeat("u", MaxUserIDLen+1), "x", nil},
			{"no content", "u", " \n", nil},
			{"long content", "u", strings.Repeat("长", MaxContentRunes+1), nil},
			{"bad UTF-8", "u", "a\xffb", nil},
			{"NUL", "u", "a\x00b", nil},
			{"NUL in the user", "u\x00", "x", nil},
			{"NUL in a topic", "u", "x", []string{"a\x00"}},
			{"long topic", "u", "x", []string{strings.Repeat("t", MaxTopicRunes+1)}},
			{"many topics", "u", "x", tooManyTopics},
		} {
			if id, err := s.Add(ctx, tc.user, tc.content, tc.topics); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: Add = %q, %v; want ErrInvalid", tc.name, id, err)
			}
		}
		// At the limits, and topics cleaned.
		id := mustAdd(t, s, "u", strings.Repeat("长", MaxContentRunes), " a ", "", "a", "b")
		hits := search(t, s, "u", "长长", 1)
		if len(hits) != 1 || hits[0].ID != id || !slices.Equal(hits[0].Topics, []string{"a", "b"}) {
			t.Errorf("got %+v", hits)
		}
		if _, err := s.Search(ctx, "u", strings.Repeat("q", MaxQueryRunes+1), 5); !errors.Is(err, ErrInvalid) {
			t.Errorf("long query: %v; want ErrInvalid", err)
		}
	})
}

func TestConcurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, where string) {
		s, _ := newStore(t, where)
		ctx := context.Background()
		const writers, each = 4, 25
		var wg sync.WaitGroup
		errs := make(chan error, 2*writers*each)
		for w := range writers {
			user := fmt.Sprint("user-", w%2)
			wg.Go(func() {
				for i := range each {
					if _, err := s.Add(ctx, user, fmt.Sprintf("用户喜欢第%d个话题 topic%d", i, w), []string{"兴趣"}); err != nil {
						errs <- err
					}
				}
			})
			wg.Go(func() {
				for range each {
					if _, err := s.Search(ctx, user, "用户对什么话题感兴趣", 5); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for u := range 2 {
			user := fmt.Sprint("user-", u)
			hits := search(t, s, user, "兴趣", MaxLimit)
			if len(hits) != 2*each {
				t.Errorf("%s: %d memories; want %d", user, len(hits), 2*each)
			}
		}
	})
}
