package rules

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent"
)

// normalize folds full-width ASCII (Ｖｏｌｕｍｅ ８０, ？) to ASCII, the ideographic space to a
// space, collapses runs of white space and trims. Case is kept: memories and search queries
// keep what the person typed.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 0x3000:
			r = ' '
		case r == '×':
			r = '*'
		case r == '÷':
			r = '/'
		case r == utf8.RuneError:
			continue
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lowerASCII lower-cases ASCII letters only, so that byte offsets in the result are those of
// the input (strings.ToLower may change the length of other letters).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// isChinese reports whether s has any CJK character: then the reply is in Chinese.
var isChinese = agent.Chinese

// segment is a part of the utterance that carries one intent (or several joined by "and").
// low is orig with ASCII lower-cased: the same bytes at the same offsets.
type segment struct {
	orig, low string
}

func newSegment(orig string) segment {
	orig = trimEnds(orig)
	return segment{orig: orig, low: lowerASCII(orig)}
}

// cut returns the part of the segment from byte i to j.
func (s segment) cut(i, j int) segment { return newSegment(s.orig[i:j]) }

// words is the lower-cased segment as space-separated words between spaces, for matching
// English phrases on word boundaries: " turn it up ".
func (s segment) words() string {
	var b strings.Builder
	b.WriteByte(' ')
	prevSpace := true
	for _, r := range s.low {
		keep := r < utf8.RuneSelf && (isLetter(byte(r)) || r >= '0' && r <= '9' || r == '\'' || r == '%')
		if !keep && r >= utf8.RuneSelf {
			keep = true // CJK text stays as it is
		}
		if keep {
			b.WriteRune(r)
			prevSpace = false
		} else if !prevSpace {
			b.WriteByte(' ')
			prevSpace = true
		}
	}
	if !prevSpace {
		b.WriteByte(' ')
	}
	return b.String()
}

// particles are what a sentence may start or end with without changing what it asks.
var (
	leadParticles = []string{"please ", "please,", "ok ", "okay ", "hey ", "can you ", "could you ", "would you ",
		"请问", "请你", "请", "麻烦你", "麻烦", "帮我", "给我", "你能", "能不能", "可以", "好的", "嗯"}
	trailParticles = []string{" please", "吧", "了", "啊", "呀", "哦", "呢", "嘛", "哈", "好吗", "好不好",
		"可以吗", "行吗", "!", "?", ".", "。", ",", "~", "…", " "}
)

// trimEnds removes white space and trailing punctuation and particles.
func trimEnds(s string) string {
	for {
		t := strings.TrimSpace(s)
		t = strings.TrimRight(t, ".!?,;:~。！？，；：、…")
		for _, p := range trailParticles {
			// A two-character particle must leave more than two characters: 你还好吗 is not
			// 你还 + 好吗.
			keep := 1
			if utf8.RuneCountInString(p) > 1 {
				keep = 3
			}
			if rest, ok := strings.CutSuffix(t, p); ok && atLeastRunes(rest, keep) {
				t = rest
			}
		}
		if t == s {
			return t
		}
		s = t
	}
}

// atLeastRunes reports whether s has n runes or more, reading no more of it than that.
func atLeastRunes(s string, n int) bool {
	for range s {
		if n--; n <= 0 {
			return true
		}
	}
	return n <= 0
}

// stripLead removes polite openings: "please", 请, 帮我, ... It finds where they end first and
// cuts once, so that a long run of them costs no more than reading it.
func stripLead(s segment) segment {
	i := 0
	for changed := true; changed; {
		changed = false
		for _, p := range leadParticles {
			if len(s.low)-i > len(p) && strings.HasPrefix(s.low[i:], p) {
				i += len(p)
				changed = true
			}
		}
	}
	if i == 0 {
		return s
	}
	return s.cut(i, len(s.orig))
}

// strongSeparators end one request and start the next, in either language.
var strongSeparators = []string{"然后", "接着", "之后再", "再然后", "并且", "同时", "顺便", ", then ", " and then ", " then ",
	"，", ",", "。", "；", ";", "!", "！", "?", "？", "\n"}

// softSeparators join two requests or are part of one ("add 5 and 10"): a segment is split
// on them only when every part is understood on its own.
var softSeparators = []string{" and ", " & ", "再", "并", "还有", "也"}

// splitOn cuts s at every occurrence of any of seps, keeping non-empty parts.
func splitOn(s segment, seps []string) []segment {
	var parts []segment
	start := 0
	for i := 0; i < len(s.low); {
		matched := 0
		for _, sep := range seps {
			if strings.HasPrefix(s.low[i:], sep) {
				matched = len(sep)
				break
			}
		}
		if matched == 0 {
			_, n := utf8.DecodeRuneInString(s.low[i:])
			i += n
			continue
		}
		if p := s.cut(start, i); p.low != "" {
			parts = append(parts, p)
		}
		i += matched
		start = i
	}
	if p := s.cut(start, len(s.orig)); p.low != "" {
		parts = append(parts, p)
	}
	return parts
}

// hasAny reports whether s contains any of subs.
func hasAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// hasWord reports whether the words form w (see segment.words) contains any of the phrases
// on word boundaries.
func hasWord(w string, phrases ...string) bool {
	for _, p := range phrases {
		if strings.Contains(w, " "+p+" ") {
			return true
		}
	}
	return false
}

// clip shortens s to n runes for quoting it back.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + "…"
}
