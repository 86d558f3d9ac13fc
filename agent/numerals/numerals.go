package numerals

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

// Options are the readings that differ between readers. nil is the zero
// Options.
type Options struct {
	// BareUnits reads 百, 千, 万 or 亿 at the start with no digit before it
	// as one of that unit: 万 is 10000. Without it such a numeral is
	// refused: 百分之五十 is not "100 分之 50".
	BareUnits bool
	// And lets "and" continue an English number after hundred or a scale:
	// "one hundred and five" is 105. Without it "and" ends the number.
	And bool
}

// Error is what ParseChinese returns for a span that is no numeral.
type Error struct {
	Numeral string // as given
	Reason  string // what is wrong: "十 after a smaller or equal unit"
}

func (e *Error) Error() string {
	return fmt.Sprintf("%q is not a number: %s", e.Numeral, e.Reason)
}

// digits are the Chinese digits; 两 and 俩 are the "two" of counting.
var digits = map[rune]int64{
	'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '俩': 2, '三': 3, '四': 4,
	'五': 5, '六': 6, '七': 7, '八': 8, '九': 9,
	'壹': 1, '贰': 2, '叁': 3, '肆': 4, '伍': 5, '陆': 6, '柒': 7, '捌': 8, '玖': 9,
}

// units are the units: the small ones multiply one digit, 万 and 亿 group
// what comes before them.
var units = map[rune]int64{
	'十': 10, '拾': 10, '百': 100, '佰': 100, '千': 1000, '仟': 1000,
	'万': 1e4, '亿': 1e8,
}

// IsDigit reports whether r is a Chinese digit.
func IsDigit(r rune) bool { _, ok := digits[r]; return ok }

// IsChinese reports whether r is a Chinese digit or unit.
func IsChinese(r rune) bool {
	_, d := digits[r]
	_, u := units[r]
	return d || u
}

// Multiplier is the value of a unit written after Arabic digits, as in 5万,
// 3千, 2亿: 百, 千, 万, 亿 and their financial forms. 十 is not one: 5十
// is not how anyone writes 50.
func Multiplier(r rune) (int64, bool) {
	u, ok := units[r]
	return u, ok && u >= 100
}

// ChineseSpan is the length in bytes of the Chinese numeral at the start of
// s: its digits and units, then 点 and what follows it when that starts
// with a digit. 0 when s does not start with a digit or unit. The span may
// still not be a number (十十): ParseChinese says.
func ChineseSpan(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if IsChinese(r) {
			i += n
			continue
		}
		if r == '点' && i > 0 {
			if d, _ := utf8.DecodeRuneInString(s[i+n:]); IsDigit(d) {
				i += n
				continue
			}
		}
		break
	}
	return i
}

// ParseChinese reads s, which must be one Chinese numeral and nothing else
// (see the package documentation), exactly. Its errors are *Error.
func ParseChinese(s string, opts *Options) (*big.Rat, error) {
	if opts == nil {
		opts = &Options{}
	}
	intPart, frac, hasFrac := strings.Cut(s, "点")
	if intPart == "" {
		return nil, notNumeral(s, "no digits")
	}
	v, err := chineseInt([]rune(intPart), opts)
	if err != nil {
		return nil, notNumeral(s, err.Error())
	}
	r := new(big.Rat).SetInt(v)
	if !hasFrac {
		return r, nil
	}
	if frac == "" {
		return nil, notNumeral(s, "no digits after 点")
	}
	var b strings.Builder
	for _, c := range frac {
		d, ok := digits[c]
		if !ok {
			return nil, notNumeral(s, fmt.Sprintf("%q after 点, where only digits are read", c))
		}
		b.WriteByte(byte('0' + d))
	}
	num, _ := new(big.Int).SetString(b.String(), 10)
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(b.Len())), nil)
	return r.Add(r, new(big.Rat).SetFrac(num, den)), nil
}

func notNumeral(s, why string) error {
	return &Error{Numeral: s, Reason: why}
}

// chineseInt reads the integer part of a numeral.
func chineseInt(rs []rune, opts *Options) (*big.Int, error) {
	onlyDigits := true
	for _, r := range rs {
		if !IsDigit(r) {
			onlyDigits = false
			break
		}
	}
	if onlyDigits {
		b := make([]byte, len(rs))
		for i, r := range rs {
			b[i] = byte('0' + digits[r])
		}
		v, _ := new(big.Int).SetString(string(b), 10)
		return v, nil
	}
	// The largest value is below 10^16 (one 亿, one 万 on each side of
	// it, four places each): int64 holds it.
	var (
		total    int64 // the 亿 group, times 10^8
		group    int64 // the 万 group since 亿, times 10^4
		section  int64 // below 万
		digit    = int64(-1)
		zero     bool  // a 零 since the last unit: 一百零五 is 105, not 150
		afterU   bool  // the pending digit came right after a unit
		lastUnit int64 // the last unit seen, for the short form 一百二
		smallest = int64(1e4)
		wan, yi  bool
	)
	// pending is the value of the digit waiting for a unit, with the short
	// form applied: 三千五 is 3500.
	pending := func() int64 {
		if digit <= 0 {
			return 0
		}
		if afterU && !zero && lastUnit >= 100 {
			return digit * lastUnit / 10
		}
		return digit
	}
	for i, r := range rs {
		if d, ok := digits[r]; ok {
			if digit > 0 {
				return nil, fmt.Errorf("two digits %q%q with no unit between them", rs[i-1], r)
			}
			if d == 0 {
				zero = true
				digit = 0
				continue
			}
			afterU = i > 0 && !IsDigit(rs[i-1])
			digit = d
			continue
		}
		u := units[r]
		switch u {
		case 1e4, 1e8:
			v := section + pending()
			if u == 1e4 {
				if wan {
					return nil, errors.New("万 twice in one group")
				}
				if v == 0 && i == 0 && opts.BareUnits {
					v = 1
				}
				if v == 0 {
					return nil, errors.New("万 with nothing to count")
				}
				group, wan = v*1e4, true
			} else {
				if yi {
					return nil, errors.New("亿 twice")
				}
				v += group
				if v == 0 && i == 0 && opts.BareUnits {
					v = 1
				}
				if v == 0 {
					return nil, errors.New("亿 with nothing to count")
				}
				total, group, yi, wan = v*1e8, 0, true, false
			}
			section, smallest = 0, 1e4
		default:
			if u >= smallest {
				return nil, fmt.Errorf("%q after a smaller or equal unit", r)
			}
			switch {
			case digit > 0:
				section += digit * u
			case u == 10 && (section == 0 || zero):
				section += 10 // 十五, 三万十二, 一千零十
			case i == 0 && opts.BareUnits:
				section += u
			default:
				return nil, fmt.Errorf("%q with no digit before it", r)
			}
			smallest = u
		}
		digit, zero, lastUnit = -1, false, u
	}
	return big.NewInt(total + group + section + pending()), nil
}

// English number words.
var (
	enSmall = map[string]int64{
		"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
		"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
		"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
	}
	enTens = map[string]int64{
		"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
	}
	enScales = map[string]int64{"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
)

// English reads the number words at the start of words (lower case, one
// word each: "twenty-five" is two) and returns the value and how many
// words it used; 0 words when words does not start with a number.
func English(words []string, opts *Options) (int64, int) {
	if opts == nil {
		opts = &Options{}
	}
	const (
		none = iota
		small
		tens
		hundred
		scale
	)
	var total, cur int64
	state, n := none, 0
	lastScale := int64(0)
	if len(words) > 1 && words[0] == "a" && (words[1] == "hundred" || enScales[words[1]] != 0) {
		cur, state, n = 1, small, 1 // a hundred, a thousand
	}
	for n < len(words) {
		w := words[n]
		if w == "and" && opts.And && (state == hundred || state == scale) && n+1 < len(words) &&
			(enSmall[words[n+1]] != 0 || enTens[words[n+1]] != 0) {
			n++ // one hundred and five
			continue
		}
		if v, ok := enSmall[w]; ok {
			if state == small || state == tens && (v >= 10 || v == 0) || v == 0 && state != none {
				break
			}
			cur += v
			if v == 0 {
				n++
				break // zero is a number on its own
			}
			state = small
		} else if v, ok := enTens[w]; ok {
			if state == small || state == tens {
				break
			}
			cur += v
			state = tens
		} else if w == "hundred" {
			if state != small && state != tens || cur%100 == 0 || cur >= 100 {
				break
			}
			cur *= 100
			state = hundred
		} else if v, ok := enScales[w]; ok {
			if state == none || state == scale || cur == 0 || lastScale != 0 && v >= lastScale {
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

// Decimal writes r in positional decimal when that is exact, that is when
// its denominator has no prime factor but 2 and 5: "1010", "-3.14",
// "0.125". It reports false for 1/3.
func Decimal(r *big.Rat) (string, bool) {
	if r.IsInt() {
		return r.Num().String(), true
	}
	den := new(big.Int).Set(r.Denom())
	places := 0
	two, five := big.NewInt(2), big.NewInt(5)
	var m big.Int
	for _, p := range []*big.Int{two, five} {
		k := 0
		for m.Mod(den, p).Sign() == 0 {
			den.Quo(den, p)
			k++
		}
		places = max(places, k)
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	return r.FloatString(places), true
}
