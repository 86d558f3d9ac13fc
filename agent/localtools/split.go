package localtools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/tools"
)

// Dimension is one part of a request to research on its own.
type Dimension struct {
	Name        string `json:"name"`
	Query       string `json:"query"`
	Explanation string `json:"explanation"`
}

// Dimensions is split_query_to_dimension's answer, in seed 004's shape.
type Dimensions struct {
	Dimensions []Dimension `json:"dimensions"`
}

// aspect is what a part of a request asks about its topic.
type aspect uint8

const (
	aspNone aspect = iota
	aspDefinition
	aspMechanism
	aspApplication
	aspHistory
	aspTrend
	aspCompare
	aspProsCons
	aspHowTo
)

// aspectWords are the words that show an aspect, in the order aspects are
// tried: the more specific first (如何工作 before 如何).
var aspectWords = []struct {
	a      aspect
	zh, en []string
}{
	{aspCompare, []string{"区别", "对比", "比较", "不同", "差异"}, []string{"difference between", "differences between", "difference", "differences", "compare", "comparison", "versus", "vs"}},
	{aspProsCons, []string{"优缺点", "优点", "缺点", "优势", "劣势", "局限"}, []string{"pros and cons", "advantages and disadvantages", "advantages", "disadvantages", "benefits", "drawbacks", "limitations"}},
	{aspHistory, []string{"发展历程", "历史", "起源", "由来"}, []string{"history of", "history", "origins of", "origin of", "origins", "origin"}},
	{aspTrend, []string{"最新进展", "最新发展", "进展", "趋势", "前景", "未来", "最新"}, []string{"latest developments", "latest", "trends in", "trends", "trend", "future of", "future", "recent progress", "progress"}},
	{aspApplication, []string{"应用领域", "应用场景", "应用", "用途", "用在哪", "用于", "案例", "场景"}, []string{"applications of", "applications", "application", "use cases", "used for", "uses of", "uses"}},
	{aspMechanism, []string{"工作原理", "工作机制", "是如何工作", "如何工作", "怎么工作", "怎样工作", "如何运作", "原理", "机制", "算法"}, []string{"how does", "how do", "how it works", "works", "work", "mechanisms", "mechanism", "principles", "principle", "algorithms"}},
	{aspHowTo, []string{"如何", "怎么", "怎样", "方法", "步骤"}, []string{"how to", "how can i", "how do i", "steps to"}},
	{aspDefinition, []string{"什么是", "什么叫", "是什么", "的定义", "的概念", "定义", "概念", "含义", "是指"}, []string{"what is", "what are", "what's", "definition of", "definition", "define", "meaning of", "concept of"}},
}

// Separators between parts of a request. Strong ones always split; weak
// ones only where both sides ask something, or the right side goes on about
// "it" (什么是强化学习和它的应用), so that "Python和Java的区别" stays whole.
var (
	zhStrong = []string{"以及", "还有", "并且", "另外", "同时", "？", "?", "；", ";", "。"}
	enStrong = []string{" as well as ", " and also ", " also ", "?", ";"}
	zhWeak   = []string{"和", "及", "与", "跟", "、", "，", ","}
	enWeak   = []string{" and ", ", "}
	// Phrases a weak separator must not cut.
	unsplittable = []string{"pros and cons", "advantages and disadvantages", "strengths and weaknesses", "research and development", "优点和缺点", "优势和劣势"}
	zhPronouns   = []string{"它们", "它", "其", "这个", "这"}
	enPronouns   = []string{"its", "it", "their", "they", "them", "this"}
	// Words removed from a part to find its topic.
	zhFillers = []string{"有哪些", "有什么", "是怎样的", "是怎么样的", "怎么样", "哪些", "实际", "主要", "具体", "基本", "一些"}
	enEdge    = []string{"its", "it", "their", "of", "the", "a", "an", "in", "for", "are", "is", "does", "do", "and", "about", "some", "main", "what", "which", "to", "tell", "me", "please", "explain", "between"}
)

// Split returns split_query_to_dimension's answer for a query. The query is
// cut at conjunctions and question marks into parts; each part is
// classified by what it asks (definition, how it works, applications,
// history, trends, comparison, pros and cons, how-to) and its topic found,
// "it" taking the topic of the part before. A request with a single part
// that asks nothing specific gets the standard dimensions: definition, how
// it works, applications. A definition brings how it works along, since
// knowing what a thing is means knowing how it works. The answer is a pure
// function of the query, in its language.
func Split(query string) (*Dimensions, error) {
	q, err := cleanQuery(query)
	if err != nil {
		return nil, err
	}
	zh := agent.Chinese(q)
	type part struct {
		a       aspect
		topic   string
		text    string
		implied bool // added by Split, not asked: brings no further dimensions
	}
	var parts []part
	prev := ""
	for _, text := range splitParts(q, zh) {
		a := classify(text, zh)
		topic := topicOfPart(text, zh)
		if topic == "" {
			topic = prev
		}
		if topic == "" {
			topic = topicOf(q)
		}
		prev = topic
		parts = append(parts, part{a, topic, text, false})
	}
	if len(parts) == 1 {
		// One question: the standard dimensions, or a definition to frame
		// the one specific thing asked.
		p := parts[0]
		switch p.a {
		case aspNone, aspDefinition, aspMechanism, aspApplication:
			parts = []part{{aspDefinition, p.topic, "", true}, {aspMechanism, p.topic, "", true}, {aspApplication, p.topic, "", true}}
		default:
			parts = []part{{aspDefinition, p.topic, "", true}, p}
		}
	}
	var dims []Dimension
	seen := map[string]bool{}
	add := func(a aspect, topic, text string) {
		d := dimension(a, topic, text, zh)
		if key := d.Name + "\x00" + d.Query; !seen[key] {
			seen[key] = true
			dims = append(dims, d)
		}
	}
	for i, p := range parts {
		add(p.a, p.topic, p.text)
		if p.a == aspDefinition && !p.implied && !slices.ContainsFunc(parts[i+1:], func(o part) bool { return o.a == aspMechanism && o.topic == p.topic }) {
			add(aspMechanism, p.topic, "")
		}
	}
	return &Dimensions{Dimensions: dims}, nil
}

// splitParts cuts a request into the parts that ask something.
func splitParts(q string, zh bool) []string {
	strong, weak := enStrong, enWeak
	if zh {
		strong, weak = zhStrong, zhWeak
	}
	pieces := []string{q}
	for _, sep := range strong {
		var next []string
		for _, p := range pieces {
			next = append(next, splitFold(p, sep)...)
		}
		pieces = next
	}
	var out []string
	for _, p := range pieces {
		for _, s := range splitWeak(p, weak, zh) {
			// Spaces and commas trimmed together: ", ," alone is no part.
			if s = strings.TrimFunc(s, isPartEdge); s != "" {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return []string{q}
	}
	return out
}

// isPartEdge reports the runes trimmed from both ends of a part.
func isPartEdge(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",，、", r) }

// splitFold is strings.Split, case-insensitive for ASCII separators.
func splitFold(s, sep string) []string {
	var out []string
	lower := asciiLower(s)
	for {
		i := strings.Index(lower, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s, lower = s[i+len(sep):], lower[i+len(sep):]
	}
}

// asciiLower lowers ASCII letters byte by byte, so that offsets in the
// result are offsets in s (strings.ToLower and strings.Map may change the
// length of some runes, and of invalid UTF-8).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// splitWeak cuts p at the weak separators where both sides ask something or
// the right one starts with a pronoun.
func splitWeak(p string, weak []string, zh bool) []string {
	lower := asciiLower(p)
	var out []string
	start := 0
	for from := 0; from < len(p); {
		i, sep := -1, ""
		for _, s := range weak {
			if j := strings.Index(lower[from:], s); j >= 0 && (i < 0 || from+j < i) {
				i, sep = from+j, s
			}
		}
		if i < 0 {
			break
		}
		left, right := p[start:i], p[i+len(sep):]
		if !insideUnsplittable(lower, i) &&
			(startsWithPronoun(right, zh) || classify(left, zh) != aspNone && classify(right, zh) != aspNone) {
			out = append(out, left)
			start = i + len(sep)
		}
		from = i + len(sep)
	}
	return append(out, p[start:])
}

func insideUnsplittable(lower string, i int) bool {
	for _, u := range unsplittable {
		for off := 0; ; {
			j := strings.Index(lower[off:], u)
			if j < 0 {
				break
			}
			if off+j <= i && i < off+j+len(u) {
				return true
			}
			off += j + 1
		}
	}
	return false
}

func startsWithPronoun(s string, zh bool) bool {
	s = strings.TrimSpace(strings.ToLower(s))
	if zh {
		for _, p := range zhPronouns {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
		return false
	}
	first, _, _ := strings.Cut(s, " ")
	return slices.Contains(enPronouns, first)
}

// classify says what a part asks.
func classify(text string, zh bool) aspect {
	t := strings.ToLower(text)
	for _, aw := range aspectWords {
		words := aw.en
		if zh {
			words = aw.zh
		}
		for _, w := range words {
			if zh && strings.Contains(t, w) || !zh && containsWord(t, w) {
				return aw.a
			}
		}
	}
	return aspNone
}

// containsWord reports whether w occurs in t between word boundaries.
func containsWord(t, w string) bool {
	for off := 0; ; {
		j := strings.Index(t[off:], w)
		if j < 0 {
			return false
		}
		i := off + j
		before := i == 0 || !isWordByte(t[i-1])
		after := i+len(w) == len(t) || !isWordByte(t[i+len(w)])
		if before && after {
			return true
		}
		off = i + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '\'' || b >= 0x80
}

// topicOfPart removes the aspect words, fillers and pronouns of a part;
// what remains is its topic, "" when it only refers back ("它的应用").
func topicOfPart(text string, zh bool) string {
	t := topicOf(text)
	if zh {
		for _, aw := range aspectWords {
			for _, w := range aw.zh {
				t = strings.ReplaceAll(t, w, " ")
			}
		}
		for _, w := range zhFillers {
			t = strings.ReplaceAll(t, w, " ")
		}
		t = strings.TrimSpace(t)
		for changed := true; changed; {
			changed = false
			for _, p := range append([]string{"的", "是", "在", "中", "和", "与", "及"}, zhPronouns...) {
				if strings.HasPrefix(t, p) {
					t, changed = strings.TrimSpace(t[len(p):]), true
				}
				if strings.HasSuffix(t, p) {
					t, changed = strings.TrimSpace(t[:len(t)-len(p)]), true
				}
			}
		}
		return strings.Join(strings.Fields(t), "")
	}
	t = " " + strings.ToLower(t) + " "
	for _, aw := range aspectWords {
		for _, w := range aw.en {
			t = strings.ReplaceAll(t, " "+w+" ", " ")
		}
	}
	words := strings.Fields(t)
	for len(words) > 0 && slices.Contains(enEdge, words[0]) {
		words = words[1:]
	}
	for len(words) > 0 && slices.Contains(enEdge, words[len(words)-1]) {
		words = words[:len(words)-1]
	}
	return strings.Join(words, " ")
}

// dimension words one dimension.
func dimension(a aspect, topic, text string, zh bool) Dimension {
	h, known := hintFor(topic)
	if zh {
		switch a {
		case aspDefinition:
			return Dimension{"概念定义", topic + "的基本概念和原理是什么", "了解" + topic + "的核心定义和基础理论"}
		case aspMechanism:
			e := "探索" + topic + "是如何运作的"
			if known {
				e = "探索" + topic + "如何" + h.zhHow
			}
			return Dimension{"工作机制", topic + "的工作机制和核心方法", e}
		case aspApplication:
			e := "研究" + topic + "在实际中的应用场景和典型案例"
			if known {
				e = "研究" + topic + "在" + h.zhApps + "等领域的应用"
			}
			return Dimension{"应用领域", topic + "的实际应用领域和案例", e}
		case aspHistory:
			return Dimension{"发展历程", topic + "的起源和发展历程", "梳理" + topic + "从提出到现在的关键阶段和里程碑"}
		case aspTrend:
			return Dimension{"最新进展", topic + "的最新进展和未来趋势", "了解" + topic + "目前的前沿方向和未来走向"}
		case aspCompare:
			return Dimension{"对比分析", topic + "的区别和各自特点", "比较" + topic + "的异同和各自适用的场合"}
		case aspProsCons:
			return Dimension{"优缺点", topic + "的优势和局限", "评估" + topic + "的长处、短处和适用条件"}
		case aspHowTo:
			return Dimension{"方法步骤", resolvePronoun(text, topic, zh), "给出与" + topic + "相关的具体方法和步骤"}
		}
		return Dimension{"具体问题", resolvePronoun(text, topic, zh), "回答关于" + topic + "的这部分问题"}
	}
	switch a {
	case aspDefinition:
		return Dimension{"Definition", fmt.Sprintf("What is %s: its basic concepts and principles", topic), fmt.Sprintf("Understand the core definition and theory of %s", topic)}
	case aspMechanism:
		e := fmt.Sprintf("Explore how %s works", topic)
		if known {
			e = fmt.Sprintf("Explore how %s %s", topic, h.enHow)
		}
		return Dimension{"How it works", fmt.Sprintf("How %s works: its mechanisms and methods", topic), e}
	case aspApplication:
		e := fmt.Sprintf("Study where %s is used in practice, with typical cases", topic)
		if known {
			e = fmt.Sprintf("Study how %s is used in %s", topic, h.enApps)
		}
		return Dimension{"Applications", fmt.Sprintf("Real-world applications and examples of %s", topic), e}
	case aspHistory:
		return Dimension{"History", fmt.Sprintf("The origins and development of %s", topic), fmt.Sprintf("Trace the key stages and milestones of %s", topic)}
	case aspTrend:
		return Dimension{"Latest developments", fmt.Sprintf("Latest developments and future trends of %s", topic), fmt.Sprintf("Learn where %s stands today and where it is heading", topic)}
	case aspCompare:
		return Dimension{"Comparison", fmt.Sprintf("Differences between %s", topic), fmt.Sprintf("Compare %s and what each is best suited for", topic)}
	case aspProsCons:
		return Dimension{"Pros and cons", fmt.Sprintf("Advantages and limitations of %s", topic), fmt.Sprintf("Weigh the strengths, weaknesses and fit of %s", topic)}
	case aspHowTo:
		return Dimension{"How to", resolvePronoun(text, topic, zh), fmt.Sprintf("Give concrete methods and steps for %s", topic)}
	}
	return Dimension{"Question", resolvePronoun(text, topic, zh), fmt.Sprintf("Answer this part of the request about %s", topic)}
}

// resolvePronoun replaces a leading "it"/"它" of a part by its topic, so a
// dimension's query stands on its own.
func resolvePronoun(text, topic string, zh bool) string {
	t := strings.TrimSpace(text)
	if zh {
		for _, p := range zhPronouns {
			if strings.HasPrefix(t, p) {
				return topic + t[len(p):]
			}
		}
		return t
	}
	first, rest, _ := strings.Cut(t, " ")
	switch strings.ToLower(first) {
	case "it", "this", "they", "them":
		return strings.TrimSpace(topic + " " + rest)
	case "its", "their":
		return strings.TrimSpace(topic + "'s " + rest)
	}
	return t
}

func splitTool() (*tools.Tool, error) {
	t, err := tools.Func(tools.LocalQuery(ToolSplit,
		"Splits a research request into dimensions to search separately, returning "+
			`{"dimensions":[{"name","query","explanation"}]}: each query is a self-contained search query. `+
			"Use it before search_web when a request asks several things (\"什么是强化学习以及它的应用\") "+
			"or is broad; a single topic gets its definition, how it works and its applications. "+
			"Dimensions are in the query's language."),
		func(ctx context.Context, in queryInput) (*Dimensions, error) {
			return Split(in.Query)
		})
	if err != nil {
		return nil, err
	}
	p := t.Parameters.Properties["query"]
	p.Description = "The user's request as they wrote it, e.g. \"什么是强化学习以及它的应用\"."
	p.MinLength, p.MaxLength = ptr(1), ptr(MaxQueryLen)
	return t, nil
}
