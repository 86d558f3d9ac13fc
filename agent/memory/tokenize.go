package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenising. Memories and queries are cut into terms the same way:
//
//   - Latin (and any other script written with spaces): words of letters and
//     digits, lowercased, with a crude suffix folding (plural -s/-es/-ies,
//     -ing, -ed, a final -e) so that "likes", "liked" and "liking" meet.
//     English function words ("the", "what", "does") are dropped.
//   - CJK (Han, kana, Hangul): runs are first split at function words and
//     particles (什么, 的, 了, 吗, 我 ...), then each piece becomes its
//     character bigrams (话题感兴趣 -> 话题 题感 感兴 兴趣); a piece of one
//     character is that character. Memories also index every single
//     character, so that a one-character query word finds a longer memory.
//
// Bigrams need no dictionary and match any Chinese word of two characters or
// more; the price is bigrams that straddle two words (题感), which simply
// match nothing. A memory's terms are stored space-separated (see store.go)
// and indexed as they are.

// A span is one term of a query and the units of the query it covers: a
// Latin word is one unit, a CJK character is one unit.
type span struct {
	term  string
	first int // index of its first unit
	n     int // number of units it covers
}

// queryTerms cuts a query into terms with the units they cover, and returns
// the number of units.
func queryTerms(s string) (spans []span, units int) {
	walk(s, func(word string) {
		if w := foldLatin(word); w != "" {
			spans = append(spans, span{term: w, first: units, n: 1})
			units++
		}
	}, func(piece []rune) {
		if len(piece) == 1 {
			spans = append(spans, span{term: string(piece), first: units, n: 1})
		}
		for i := 0; i+1 < len(piece); i++ {
			spans = append(spans, span{term: string(piece[i : i+2]), first: units + i, n: 2})
		}
		units += len(piece)
	})
	return spans, units
}

// docTokens returns the terms of a memory's text, in order: bigrams and
// single characters of CJK pieces, folded Latin words. A term holds only
// letters, digits and combining marks, so a space separates terms.
func docTokens(s string) []string {
	var out []string
	walk(s, func(word string) {
		if w := foldLatin(word); w != "" {
			out = append(out, w)
		}
	}, func(piece []rune) {
		for i := range piece {
			out = append(out, string(piece[i]))
			if i+1 < len(piece) {
				out = append(out, string(piece[i:i+2]))
			}
		}
	})
	return out
}

// walk calls latin for each Latin word of s and cjk for each CJK piece left
// after removing function words, in order.
func walk(s string, latin func(string), cjk func([]rune)) {
	var word strings.Builder
	var run []rune
	flushWord := func() {
		if word.Len() > 0 {
			latin(word.String())
			word.Reset()
		}
	}
	flushRun := func() {
		if len(run) > 0 {
			splitCJK(run, cjk)
			run = run[:0]
		}
	}
	for _, r := range s {
		r = narrow(r)
		switch {
		case isCJK(r):
			flushWord()
			run = append(run, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			flushRun()
			word.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '’') && word.Len() > 0:
			word.WriteRune('\'') // inside a word: user's, don't
		default:
			flushWord()
			flushRun()
		}
	}
	flushWord()
	flushRun()
}

// narrow maps fullwidth ASCII (ＡＩ, １２) to ASCII.
func narrow(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		return r - 0xFEE0
	}
	return r
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// splitCJK calls emit for each piece of run between function words.
func splitCJK(run []rune, emit func([]rune)) {
	start := 0
	for i := 0; i < len(run); {
		n := stopAt(run[i:])
		if n == 0 {
			i++
			continue
		}
		if i > start {
			emit(run[start:i])
		}
		i += n
		start = i
	}
	if start < len(run) {
		emit(run[start:])
	}
}

// stopAt returns the length in characters of the function word at the start
// of rs, or 0.
func stopAt(rs []rune) int {
	for n := min(maxStopWordLen, len(rs)); n >= 2; n-- {
		if cjkStopWords[string(rs[:n])] {
			return n
		}
	}
	if cjkStopChars[rs[0]] {
		return 1
	}
	return 0
}

// cjkStopWords are function words of two or more characters. They are
// removed before the single characters below, so 什么 goes whole.
var cjkStopWords = setOf(
	"什么", "怎么", "怎样", "怎么样", "为什么", "哪些", "哪个", "哪里", "多少",
	"一个", "一些", "一下", "这个", "那个", "这些", "那些", "这样", "那样",
	"我们", "你们", "他们", "她们", "它们", "咱们", "自己",
	"可以", "已经", "就是", "还是", "或者", "以及", "因为", "所以", "但是",
	"如果", "是否", "有没有", "是不是", "有关", "关于",
)

var maxStopWordLen = func() int {
	n := 0
	for w := range cjkStopWords {
		n = max(n, utf8.RuneCountInString(w))
	}
	return n
}()

// cjkStopChars are particles, pronouns and the copula: characters that
// almost never carry what a memory is about. Characters that also start
// common content words (对 of 对话, 在 of 现在) are left alone.
var cjkStopChars = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "的了着吗呢吧啊呀哦嘛么是和与及或把被给也都很我你您他她它" {
		m[r] = true
	}
	return m
}()

// englishStopWords are dropped from Latin text (after lowercasing, before
// folding).
var englishStopWords = setOf(
	"a", "an", "the", "is", "are", "was", "were", "be", "been", "am", "do", "does", "did",
	"what", "which", "who", "whom", "how", "why", "when", "where",
	"i", "me", "my", "mine", "you", "your", "we", "our", "they", "them", "their",
	"he", "she", "it", "its", "his", "her", "him", "this", "that", "these", "those",
	"to", "of", "in", "on", "at", "for", "with", "about", "and", "or", "but", "not",
	"can", "could", "would", "should", "will", "shall", "may", "might", "must",
	"have", "has", "had", "there", "here", "any", "some", "so", "if", "than", "then",
	"also", "just", "very", "s", "t",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// foldLatin drops stop words and folds common English suffixes. It is crude
// on purpose: memories and queries are folded alike, so it only has to make
// the forms of one word meet, not produce real stems.
func foldLatin(w string) string {
	if i := strings.IndexByte(w, '\''); i >= 0 {
		w = w[:i] // user's -> user, don't -> don
	}
	if w == "" || englishStopWords[w] {
		return ""
	}
	if !isASCIILetters(w) {
		return w // digits, or another alphabet: leave it alone
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "ches") ||
		strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes")):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:len(w)-3])
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:len(w)-2])
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns a doubled final consonant back into one (running -> runn
// -> run), except l, s and z, which English doubles in the stem (falling).
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
