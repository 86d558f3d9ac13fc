package localtools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent"
)

// The seed's own example for guide_user_detail, to the character.
func TestGuideSeedExample(t *testing.T) {
	want := "为了更好地帮助您查找关于人工智能的信息，我有几个问题：\n" +
		"1. 您是想了解人工智能的基本概念还是最新发展？\n" +
		"2. 您对人工智能的哪个具体领域感兴趣？例如，机器学习、自然语言处理或计算机视觉？\n" +
		"3. 您是出于学术目的、职业发展还是个人兴趣在了解这个话题？\n" +
		"4. 您希望获得基础入门级的信息还是深入的技术细节？"
	got, err := Guide("人工智能")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Guide(人工智能) =\n%s\nwant\n%s", got, want)
	}
}

func TestGuide(t *testing.T) {
	numbered := regexp.MustCompile(`(?m)^[1-4]\. `)
	tests := []struct {
		query    string
		topic    string // must appear in the first line
		contains string
	}{
		{"我想了解光合作用", "光合作用", "它的原理、应用还是发展历史"},
		{"请介绍一下区块链？", "区块链", "共识机制"},
		{"Tell me about photosynthesis?", "photosynthesis", "how it works"},
		{"quantum computing", "quantum computing", "quantum algorithms"},
		{"  深度学习  ", "深度学习", "卷积网络"},
	}
	for _, tt := range tests {
		got, err := Guide(tt.query)
		if err != nil {
			t.Fatalf("Guide(%q): %v", tt.query, err)
		}
		lines := strings.Split(got, "\n")
		if len(lines) != 5 || len(numbered.FindAllString(got, -1)) != 4 {
			t.Errorf("Guide(%q) is not an intro and 4 numbered questions:\n%s", tt.query, got)
		}
		if !strings.Contains(lines[0], tt.topic) {
			t.Errorf("Guide(%q): first line %q does not name the topic %q", tt.query, lines[0], tt.topic)
		}
		if !strings.Contains(got, tt.contains) {
			t.Errorf("Guide(%q) does not contain %q:\n%s", tt.query, tt.contains, got)
		}
		if agent.Chinese(tt.query) != strings.Contains(got, "您") {
			t.Errorf("Guide(%q) answered in the wrong language:\n%s", tt.query, got)
		}
		if again, _ := Guide(tt.query); again != got {
			t.Errorf("Guide(%q) is not deterministic", tt.query)
		}
	}
	if _, err := Guide(" \n"); err == nil {
		t.Error("Guide of a blank query succeeded")
	}
}

func TestSplitSeedExample(t *testing.T) {
	got, err := Split("什么是强化学习以及它的应用")
	if err != nil {
		t.Fatal(err)
	}
	// The seed's names, its first and third queries and explanations word
	// for word; the second query is generic where the seed's says 算法,
	// which would not fit most topics.
	want := []Dimension{
		{"概念定义", "强化学习的基本概念和原理是什么", "了解强化学习的核心定义和基础理论"},
		{"工作机制", "强化学习的工作机制和核心方法", "探索强化学习如何通过奖励机制进行学习"},
		{"应用领域", "强化学习的实际应用领域和案例", "研究强化学习在游戏、机器人、自动驾驶等领域的应用"},
	}
	if fmt.Sprint(got.Dimensions) != fmt.Sprint(want) {
		t.Errorf("Split = %+v\nwant %+v", got.Dimensions, want)
	}
	b, _ := json.Marshal(got)
	if !strings.HasPrefix(string(b), `{"dimensions":[{"name":"概念定义","query":`) {
		t.Errorf("JSON shape: %s", b)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		query string
		names []string
		// a query of the dimensions, in order, must contain these
		queries []string
	}{
		// A bare topic: the standard three.
		{"人工智能", []string{"概念定义", "工作机制", "应用领域"}, []string{"人工智能", "人工智能", "人工智能"}},
		{"photosynthesis", []string{"Definition", "How it works", "Applications"}, []string{"photosynthesis", "photosynthesis", "photosynthesis"}},
		// Two questions joined by a weak conjunction: split.
		{"强化学习的原理和应用", []string{"工作机制", "应用领域"}, []string{"强化学习", "强化学习"}},
		// A conjunction inside the topic: kept whole.
		{"Python和Java的区别", []string{"概念定义", "对比分析"}, []string{"Python和Java", "Python和Java"}},
		{"区块链的历史还有未来趋势", []string{"发展历程", "最新进展"}, []string{"区块链", "区块链"}},
		{"什么是光合作用？它是如何工作的？", []string{"概念定义", "工作机制"}, []string{"光合作用", "光合作用"}},
		{"what is reinforcement learning and its applications", []string{"Definition", "How it works", "Applications"},
			[]string{"reinforcement learning", "reinforcement learning", "reinforcement learning"}},
		{"the history of rust as well as its future", []string{"History", "Latest developments"}, []string{"rust", "rust"}},
		{"pros and cons of nuclear power", []string{"Definition", "Pros and cons"}, []string{"nuclear power", "nuclear power"}},
		{"区块链的优缺点", []string{"概念定义", "优缺点"}, []string{"区块链", "区块链"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.query)
		if err != nil {
			t.Fatalf("Split(%q): %v", tt.query, err)
		}
		var names []string
		for _, d := range got.Dimensions {
			names = append(names, d.Name)
			if d.Query == "" || d.Explanation == "" {
				t.Errorf("Split(%q): empty field in %+v", tt.query, d)
			}
		}
		if strings.Join(names, "|") != strings.Join(tt.names, "|") {
			t.Errorf("Split(%q) names = %v, want %v", tt.query, names, tt.names)
			continue
		}
		for i, q := range tt.queries {
			if !strings.Contains(got.Dimensions[i].Query, q) {
				t.Errorf("Split(%q) dimension %d query %q does not contain %q", tt.query, i, got.Dimensions[i].Query, q)
			}
		}
		if again, _ := Split(tt.query); fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("Split(%q) is not deterministic", tt.query)
		}
	}
	if _, err := Split(""); err == nil {
		t.Error("Split of an empty query succeeded")
	}
}

func TestTopicOf(t *testing.T) {
	tests := map[string]string{
		"我想了解人工智能":                 "人工智能",
		"关于量子计算的信息":                "量子计算",
		"什么是区块链？":                  "区块链",
		"tell me about Mars":       "Mars",
		"What is the Go language?": "Go language",
		"什么":                       "什么",
	}
	for in, want := range tests {
		if got := topicOf(in); got != want {
			t.Errorf("topicOf(%q) = %q, want %q", in, got, want)
		}
	}
}
