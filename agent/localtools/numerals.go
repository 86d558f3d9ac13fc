package localtools

import "strings"

// Chinese numerals: the digits, the small units (十百千) and the large ones
// (万亿), with the financial forms and 两 for 2.
var zhDigits = map[rune]float64{
	'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4,
	'五': 5, '六': 6, '七': 7, '八': 8, '九': 9,
	'壹': 1, '贰': 2, '叁': 3, '肆': 4, '伍': 5, '陆': 6, '柒': 7, '捌': 8, '玖': 9,
}

var zhSmallUnits = map[rune]float64{'十': 10, '拾': 10, '百': 100, '佰': 100, '千': 1000, '仟': 1000}

var zhLargeUnits = map[rune]float64{'万': 1e4, '亿': 1e8}

func isZhNumeral(r rune) bool {
	_, d := zhDigits[r]
	_, s := zhSmallUnits[r]
	_, l := zhLargeUnits[r]
	return d || s || l
}

// scanZhNumber reads a Chinese numeral at rs[i:]: 三十, 二十五, 一百零五,
// 三百五 (350, the spoken short form), 一万二千, 二零二三 (digit by digit),
// 三点五 (3.5). It returns the value and the number of runes read, 0 when
// there is no numeral at i.
func scanZhNumber(rs []rune, i int) (float64, int) {
	j := i
	for j < len(rs) && isZhNumeral(rs[j]) {
		j++
	}
	if j == i {
		return 0, 0
	}
	v := zhInteger(rs[i:j])
	// A decimal part: 点 followed by digits, read one by one.
	if j+1 < len(rs) && rs[j] == '点' {
		if _, ok := zhDigits[rs[j+1]]; ok {
			k, scale := j+1, 0.1
			for k < len(rs) {
				d, ok := zhDigits[rs[k]]
				if !ok {
					break
				}
				v += d * scale
				scale /= 10
				k++
			}
			j = k
		}
	}
	return v, j - i
}

// zhInteger is the value of a run of numeral characters.
func zhInteger(rs []rune) float64 {
	onlyDigits := true
	for _, r := range rs {
		if _, ok := zhDigits[r]; !ok {
			onlyDigits = false
			break
		}
	}
	if onlyDigits && len(rs) > 1 {
		// 二零二三: a number read digit by digit.
		var v float64
		for _, r := range rs {
			v = v*10 + zhDigits[r]
		}
		return v
	}
	var (
		total   float64 // complete 万 and 亿 groups
		section float64 // below the current large unit
		digit   float64 // the digit waiting for its unit
		hasDig  bool
		last    float64 // the last unit seen, for 三百五 = 350
		zero    bool    // a 零 since that unit: 一百零五 is 105, not 150
	)
	for _, r := range rs {
		if d, ok := zhDigits[r]; ok {
			if d == 0 {
				zero = true
			}
			digit, hasDig = d, true
			continue
		}
		if u, ok := zhSmallUnits[r]; ok {
			if !hasDig {
				digit = 1 // 十五 is 15
			}
			section += digit * u
			digit, hasDig, last, zero = 0, false, u, false
			continue
		}
		u := zhLargeUnits[r]
		if hasDig && !zero && last >= 100 {
			digit *= last / 10 // 一万二千五 = 12500 (the 五 is 五百)
		}
		if section+digit == 0 && total == 0 {
			digit = 1 // 万 alone
		}
		if u == 1e8 {
			total = (total + section + digit) * u
		} else {
			total += (section + digit) * u
		}
		section, digit, hasDig, last, zero = 0, 0, false, u, false
	}
	if hasDig && !zero && last >= 100 {
		digit *= last / 10 // 三百五 = 350, 两万三 = 23000
	}
	return total + section + digit
}

// English number words: "five", "twenty-five", "one hundred five",
// "three thousand".
var enSmall = map[string]float64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}

var enTens = map[string]float64{
	"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

var enScales = map[string]float64{"thousand": 1e3, "million": 1e6, "billion": 1e9}

// scanEnNumber reads number words from the start of words and returns the
// value and how many words it used (0: none). It stops at the first word that
// would not continue the number, so "five three" is two numbers.
func scanEnNumber(words []string) (float64, int) {
	const (
		none = iota
		small
		tens
		hundred
		scale
	)
	var total, cur float64
	state, n := none, 0
	lastScale := 0.0
	for _, w := range words {
		w = strings.ToLower(w)
		if v, ok := enSmall[w]; ok {
			if state == small || (state == tens && v >= 10) || (state == tens && v == 0) ||
				(v == 0 && state != none) {
				break
			}
			cur += v
			state = small
		} else if v, ok := enTens[w]; ok {
			if state == small || state == tens {
				break
			}
			cur += v
			state = tens
		} else if w == "hundred" {
			if (state != small && state != tens) || cur >= 100 || cur == 0 {
				break
			}
			cur *= 100
			state = hundred
		} else if v, ok := enScales[w]; ok {
			if state == none || state == scale || cur == 0 || (lastScale != 0 && v >= lastScale) {
				break
			}
			total += cur * v
			cur, lastScale, state = 0, v, scale
		} else {
			break
		}
		n++
	}
	return total + cur, n
}
