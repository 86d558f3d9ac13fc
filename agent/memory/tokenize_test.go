package memory

import (
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

func TestDocTokens(t *testing.T) {
	got := docTokens("用户喜欢科技，喜欢 hiking.")
	want := []string{"用", "用户", "户", "户喜", "喜", "喜欢", "欢", "欢科", "科", "科技", "技", "喜", "喜欢", "欢", "hik"}
	if !slices.Equal(got, want) {
		t.Errorf("docTokens = %q; want %q", got, want)
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
