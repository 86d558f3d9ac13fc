package memory

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestQueryTerms(t *testing.T) {
	for _, tc := range []struct {
		query string
		terms string // the spans' terms, space-separated
		units int
	}{
		// The seed's query: 对 stays (对话), 什么 goes, the rest are bigrams.
		{"用户对什么话题感兴趣", "用户 户对 话题 题感 感兴 兴趣", 8},
		{"我喜欢什么", "喜欢", 2},
		{"什么", "", 0},
		{"猫", "猫", 1},
		{"我的猫", "猫", 1}, // a piece of one character is a term
		{"What does the user like?", "user lik", 2},
		{"likes, liked, liking", "lik lik lik", 3},
		{"Running hobbies!", "run hobby", 2},
		{"user's dogs", "user dog", 2},
		{"ＡＩ技术", "ai 技术", 3}, // fullwidth Latin is folded
		{"2023年的AI", "2023 年 ai", 3},
		{"   ,.;!?  ", "", 0},
	} {
		spans, units := queryTerms(tc.query)
		var got []string
		for _, s := range spans {
			got = append(got, s.term)
		}
		if strings.Join(got, " ") != tc.terms || units != tc.units {
			t.Errorf("queryTerms(%q) = %q, %d units; want %q, %d", tc.query, strings.Join(got, " "), units, tc.terms, tc.units)
		}
	}
}

func TestDocTerms(t *testing.T) {
	counts := map[string]int{}
	n := docTerms("用户喜欢科技，喜欢 hiking.", counts)
	want := map[string]int{
		"用": 1, "户": 1, "喜": 2, "欢": 2, "科": 1, "技": 1,
		"用户": 1, "户喜": 1, "喜欢": 2, "欢科": 1, "科技": 1,
		"hik": 1,
	}
	if !maps.Equal(counts, want) {
		keys := slices.Sorted(maps.Keys(counts))
		t.Errorf("docTerms counts %v (keys %v); want %v", counts, keys, want)
	}
	if n != 15 {
		t.Errorf("docTerms added %d terms; want 15", n)
	}
}

func TestFoldLatin(t *testing.T) {
	for in, want := range map[string]string{
		"the": "", "what": "", // walk lowercases before folding
		"hobbies": "hobby", "boxes": "box", "classes": "class", "dogs": "dog", "bus": "bus", "this": "",
		"running": "run", "falling": "fall", "liked": "lik", "like": "lik", "coffee": "coffee",
		"need": "need", "sing": "sing", "2023": "2023", "café": "café", "don't": "don",
	} {
		if got := foldLatin(in); got != want {
			t.Errorf("foldLatin(%q) = %q; want %q", in, got, want)
		}
	}
}
