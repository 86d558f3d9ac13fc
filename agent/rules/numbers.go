package rules

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/devicectl/devicectl/agent/numerals"
)

// The planner reads numbers through package numerals, with its own two choices: a unit with
// nothing to count (百 in 百分之五十) is not a number (the zero numerals.Options), and
// "one hundred and five" is one number (And), since "and" never joins operands here.
var (
	zhOptions = &numerals.Options{}
	enOptions = &numerals.Options{And: true}
)

// maxZhRunes bounds the integer part of a Chinese numeral the planner reads: longer is no
// level, index or operand anyone says.
const maxZhRunes = 12

// notNumberAfterOne lists what, after a lone 一, makes it "a" rather than "one":
// 一点 (a bit), 一下 (a moment), 一些 (some), 一个 (one, as in 笑一个), ...
const notNumberAfterOne = "点下些个会样起直定边切共同般旦致笑"

// digitizeZh replaces every Chinese numeral in s by Arabic digits, so that 把音量调到三十 reads
// 把音量调到30 and 三点五加二 reads 3.5加2. A lone 一 used as "a" (一点, 一下, 一个) and what
// is no number (百分之, 十十) are left alone.
func digitizeZh(s string) string {
	if !strings.ContainsFunc(s, numerals.IsChinese) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !numerals.IsChinese(r) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		j := i + numerals.ChineseSpan(s[i:])
		run := s[i:j]
		i = j
		next, _ := utf8.DecodeRuneInString(s[j:])
		if (run == "一" || run == "两") && strings.ContainsRune(notNumberAfterOne, next) && next != utf8.RuneError {
			if run == "一" || next != '个' {
				b.WriteString(run)
				continue
			}
		}
		intPart, _, _ := strings.Cut(run, "点")
		if utf8.RuneCountInString(intPart) > maxZhRunes {
			b.WriteString(run)
			continue
		}
		v, err := numerals.ParseChinese(run, zhOptions)
		if err != nil {
			b.WriteString(run)
			continue
		}
		d, _ := numerals.Decimal(v) // a numeral is always a finite decimal
		b.WriteString(d)
	}
	return b.String()
}

// digitizeEn replaces English number words in s (lower case) by digits: "twenty five" and
// "twenty-five" 25, "one hundred and five" 105, "a hundred" 100. Other words are kept.
func digitizeEn(s string) string {
	words := splitWords(s)
	if len(words) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(words); {
		// The words of one number are separated only by spaces or a hyphen.
		chain := []string{s[words[i].start:words[i].end]}
		for k := i + 1; k < len(words); k++ {
			gap := s[words[k-1].end:words[k].start]
			if gap == "" || strings.Trim(gap, " -") != "" {
				break
			}
			chain = append(chain, s[words[k].start:words[k].end])
		}
		val, n := numerals.English(chain, enOptions)
		if n == 0 {
			i++
			continue
		}
		b.WriteString(s[last:words[i].start])
		b.WriteString(strconv.FormatInt(val, 10))
		last = words[i+n-1].end
		i += n
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

type span struct{ start, end int }

// splitWords finds the runs of ASCII letters in s.
func splitWords(s string) []span {
	var ws []span
	for i := 0; i < len(s); {
		if !isLetter(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isLetter(s[j]) {
			j++
		}
		ws = append(ws, span{i, j})
		i = j
	}
	return ws
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// formatNumber writes v without a fraction when it has none: 15, 2.5, -3.
func formatNumber(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
