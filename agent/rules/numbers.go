package rules

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// zhDigits are the Chinese digit characters; 两 and 俩 are the "two" of counting.
var zhDigits = map[rune]int64{
	'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '俩': 2, '三': 3, '四': 4,
	'五': 5, '六': 6, '七': 7, '八': 8, '九': 9,
}

// zhUnits are the units that multiply the digit before them.
var zhUnits = map[rune]int64{'十': 10, '百': 100, '千': 1000}

func isZhNumeral(r rune) bool {
	_, d := zhDigits[r]
	_, u := zhUnits[r]
	return d || u || r == '万'
}

// parseZhInt reads a run of Chinese numerals: 十五 15, 二十五 25, 一百 100, 一百零五 105,
// 一百二 120 (the colloquial "one hundred two tens"), 两千 2000, 三万五千 35000. A run of bare
// digits is read digit by digit, as years and codes are said: 二五 25, 一九九八 1998.
// It reports false for what is not a number (a unit with nothing to multiply, like 百 alone).
func parseZhInt(s string) (int64, bool) {
	rs := []rune(s)
	if len(rs) == 0 || len(rs) > 12 {
		return 0, false
	}
	onlyDigits := true
	for _, r := range rs {
		if _, ok := zhDigits[r]; !ok {
			onlyDigits = false
			break
		}
	}
	if onlyDigits {
		var n int64
		for _, r := range rs {
			n = n*10 + zhDigits[r]
		}
		return n, true
	}
	var total, section int64
	digit := int64(-1)
	lastUnit := int64(0)
	prevUnit := false // the rune before the pending digit was a unit (一百二: 二 follows 百)
	for i, r := range rs {
		if d, ok := zhDigits[r]; ok {
			prevUnit = i > 0 && (zhUnits[rs[i-1]] != 0 || rs[i-1] == '万')
			digit = d
			continue
		}
		if r == '万' {
			if digit >= 0 {
				section += digit
			}
			if section == 0 {
				return 0, false
			}
			total += section * 10000
			section, digit, lastUnit = 0, -1, 10000
			continue
		}
		u := zhUnits[r]
		if digit == 0 && rs[i-1] == '零' {
			digit = -1 // 一千零十: the 零 only marks the missing hundreds
		}
		if digit < 0 {
			// 十五, 三万十二, 一千零十: a 十 that starts a section counts one ten.
			if u != 10 || i > 0 && rs[i-1] != '万' && rs[i-1] != '零' {
				return 0, false
			}
			digit = 1
		}
		section += digit * u
		digit, lastUnit = -1, u
	}
	if digit >= 0 {
		if prevUnit && lastUnit >= 100 && digit != 0 {
			section += digit * lastUnit / 10 // 一百二 is 120, 三千五 is 3500
		} else {
			section += digit
		}
	}
	return total + section, true
}

// zhNumber reads a Chinese number with an optional decimal part: 三点五 3.5.
func zhNumber(s string) (float64, bool) {
	intPart, frac, hasFrac := strings.Cut(s, "点")
	n, ok := parseZhInt(intPart)
	if !ok {
		return 0, false
	}
	if !hasFrac {
		return float64(n), true
	}
	var b strings.Builder
	b.WriteString(strconv.FormatInt(n, 10))
	b.WriteByte('.')
	for _, r := range frac {
		d, ok := zhDigits[r]
		if !ok {
			return 0, false
		}
		b.WriteByte(byte('0' + d))
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	return f, err == nil
}

// notNumberAfterOne lists what, after a lone 一, makes it "a" rather than "one":
// 一点 (a bit), 一下 (a moment), 一些 (some), 一个 (one, as in 笑一个), ...
const notNumberAfterOne = "点下些个会样起直定边切共同般旦致笑"

// digitizeZh replaces every run of Chinese numerals in s by Arabic digits, so that
// 把音量调到三十 reads 把音量调到30 and 三点五加二 reads 3.5加2. A lone 一 used as "a"
// (一点, 一下, 一个) and a unit with nothing to count (百分之) are left alone.
func digitizeZh(s string) string {
	if !hasZhNumeral(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isZhNumeral(r) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		j := i
		for j < len(s) {
			r2, n := utf8.DecodeRuneInString(s[j:])
			if isZhNumeral(r2) {
				j += n
				continue
			}
			// A decimal point: 点 followed by a digit.
			if r2 == '点' && j > i {
				r3, _ := utf8.DecodeRuneInString(s[j+n:])
				if _, ok := zhDigits[r3]; ok {
					j += n
					continue
				}
			}
			break
		}
		run := s[i:j]
		next, _ := utf8.DecodeRuneInString(s[j:])
		if (run == "一" || run == "两") && strings.ContainsRune(notNumberAfterOne, next) && next != utf8.RuneError {
			if run == "一" || next != '个' {
				b.WriteString(run)
				i = j
				continue
			}
		}
		if v, ok := zhNumber(run); ok {
			b.WriteString(formatNumber(v))
		} else {
			b.WriteString(run)
		}
		i = j
	}
	return b.String()
}

func hasZhNumeral(s string) bool {
	for _, r := range s {
		if isZhNumeral(r) {
			return true
		}
	}
	return false
}

// enSmall and enTens are the English number words the planner reads.
var enSmall = map[string]int64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19,
}

var enTens = map[string]int64{
	"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
	"eighty": 80, "ninety": 90,
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
		val, end, ok := readEnNumber(s, words, i)
		if !ok {
			i++
			continue
		}
		b.WriteString(s[last:words[i].start])
		b.WriteString(strconv.FormatInt(val, 10))
		last = words[end-1].end
		i = end
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

// readEnNumber reads the number words starting at words[i]; end is one past the last word
// used. Words must be separated only by spaces or a hyphen.
func readEnNumber(s string, words []span, i int) (val int64, end int, ok bool) {
	w := func(k int) string { return s[words[k].start:words[k].end] }
	joined := func(k int) bool { // words[k] follows words[k-1] with only spaces or a hyphen between
		gap := s[words[k-1].end:words[k].start]
		return gap != "" && strings.Trim(gap, " -") == ""
	}
	k := i
	var cur int64
	seen := false
	if w(k) == "a" && k+1 < len(words) && w(k+1) == "hundred" && joined(k+1) {
		cur, k, seen = 1, k+1, true
	}
	for k < len(words) {
		word := w(k)
		if k > i && !joined(k) {
			break
		}
		switch {
		case enSmall[word] != 0 || word == "zero":
			if seen && cur%100 != 0 && cur%10 == 0 && cur%100 >= 20 && enSmall[word] < 10 {
				cur += enSmall[word] // twenty five
			} else if seen && cur%100 == 0 && cur > 0 {
				cur += enSmall[word] // one hundred five
			} else if seen {
				return finish(cur, k, i)
			} else {
				cur = enSmall[word]
			}
		case enTens[word] != 0:
			if seen && !(cur%100 == 0 && cur > 0) {
				return finish(cur, k, i)
			}
			cur += enTens[word]
		case word == "hundred" && seen && cur > 0 && cur < 10:
			cur *= 100
		case word == "and" && seen && cur%100 == 0 && cur >= 100 && k+1 < len(words) &&
			(enSmall[w(k+1)] != 0 || enTens[w(k+1)] != 0):
			// one hundred and five
		default:
			return finish(cur, k, i)
		}
		seen = true
		k++
	}
	return finish(cur, k, i)
}

func finish(cur int64, k, i int) (int64, int, bool) {
	if k == i {
		return 0, 0, false
	}
	return cur, k, true
}

// formatNumber writes v without a fraction when it has none: 15, 2.5, -3.
func formatNumber(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
