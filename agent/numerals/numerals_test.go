package numerals

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"
)

// One table for both readers: the rule planner reads with the zero Options,
// calculate with BareUnits.
func TestParseChinese(t *testing.T) {
	rules := &Options{}
	calc := &Options{BareUnits: true}
	tests := []struct {
		in    string
		opts  *Options
		want  string // the exact value in decimal; "" for refused
		cause string // part of the error when refused
	}{
		// Digits, and runs of digits read one by one.
		{"零", rules, "0", ""}, {"〇", rules, "0", ""}, {"一", rules, "1", ""}, {"九", rules, "9", ""},
		{"两", rules, "2", ""}, {"俩", rules, "2", ""},
		{"二五", rules, "25", ""}, {"一九九八", rules, "1998", ""}, {"二零二三", calc, "2023", ""},
		{"一二三四五六七八九零一二三四五六七八九零", calc, "12345678901234567890", ""}, // beyond int64
		// Units.
		{"十", rules, "10", ""}, {"十五", rules, "15", ""}, {"二十", rules, "20", ""}, {"二十五", rules, "25", ""},
		{"九十九", rules, "99", ""}, {"一百", rules, "100", ""}, {"一百一十", rules, "110", ""},
		{"一百二十三", rules, "123", ""}, {"两百", rules, "200", ""}, {"两千", rules, "2000", ""},
		// 零 marks missing places.
		{"一百零五", rules, "105", ""}, {"一千零十", rules, "1010", ""}, {"一千零十", calc, "1010", ""},
		{"一千零十五", calc, "1015", ""}, {"一千零五十", calc, "1050", ""}, {"一万零二", rules, "10002", ""},
		{"一万零二百", rules, "10200", ""}, {"十万零五", rules, "100005", ""},
		// The spoken short form.
		{"一百二", rules, "120", ""}, {"三百五", calc, "350", ""}, {"三千五", rules, "3500", ""},
		{"两千三", calc, "2300", ""}, {"一万二", calc, "12000", ""}, {"两万三", rules, "23000", ""},
		{"一万二千五", calc, "12500", ""}, {"一亿五", calc, "150000000", ""},
		// 万 and 亿.
		{"三万五千", rules, "35000", ""}, {"十万", rules, "100000", ""}, {"三万十二", rules, "30012", ""},
		{"一百万", rules, "1000000", ""}, {"十二万三千四百五十六", rules, "123456", ""},
		{"一亿", rules, "100000000", ""}, {"一亿五千万", calc, "150000000", ""}, {"两亿零三", rules, "200000003", ""},
		{"一万亿", calc, "1000000000000", ""}, {"三万五千亿", rules, "3500000000000", ""},
		{"九千九百九十九万九千九百九十九亿九千九百九十九万九千九百九十九", rules, "9999999999999999", ""},
		// Financial forms.
		{"壹佰贰拾叁", calc, "123", ""}, {"壹万贰仟叁佰肆拾伍", rules, "12345", ""}, {"玖拾", rules, "90", ""},
		// Decimals.
		{"三点五", rules, "3.5", ""}, {"三点一四", calc, "3.14", ""}, {"零点五", calc, "0.5", ""},
		{"一百点零五", rules, "100.05", ""}, {"两点五", rules, "2.5", ""},
		// A unit with nothing to count: the rule planner refuses, calculate counts one.
		{"百", rules, "", "no digit before it"}, {"百", calc, "100", ""},
		{"千", rules, "", "no digit before it"}, {"千", calc, "1000", ""},
		{"万", rules, "", "nothing to count"}, {"万", calc, "10000", ""},
		{"亿", rules, "", "nothing to count"}, {"亿", calc, "100000000", ""},
		// Refused by both.
		{"十十", calc, "", "smaller or equal unit"}, {"一百一千", calc, "", "smaller or equal unit"},
		{"二三百", calc, "", "two digits"}, {"一百五零", calc, "", "two digits"},
		{"万万", calc, "", "万 twice"}, {"一亿亿", calc, "", "亿 twice"}, {"一千零百", calc, "", "no digit before it"},
		{"一百十", calc, "", "no digit before it"}, {"一万千", calc, "", "no digit before it"},
		{"三点", calc, "", "no digits after 点"}, {"点五", calc, "", "no digits"},
		{"三点五十", calc, "", "after 点"}, {"", calc, "", "no digits"},
	}
	for _, tt := range tests {
		got, err := ParseChinese(tt.in, tt.opts)
		var ne *Error
		name := "rules"
		if tt.opts.BareUnits {
			name = "calculate"
		}
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("%s: ParseChinese(%q) = %s, want an error", name, tt.in, got.RatString())
		case tt.want == "" && (!errors.As(err, &ne) || ne.Numeral != tt.in || !strings.Contains(ne.Reason, tt.cause)):
			t.Errorf("%s: ParseChinese(%q): error %v, want an *Error saying %q", name, tt.in, err, tt.cause)
		case tt.want != "" && err != nil:
			t.Errorf("%s: ParseChinese(%q): %v, want %s", name, tt.in, err, tt.want)
		case tt.want != "":
			if s, _ := Decimal(got); s != tt.want {
				t.Errorf("%s: ParseChinese(%q) = %s, want %s", name, tt.in, s, tt.want)
			}
		}
	}
}

func TestChineseSpan(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"三十加五", "三十"}, {"三点五加二", "三点五"}, {"两点", "两"}, {"一点五十", "一点五十"},
		{"音量", ""}, {"点五", ""}, {"壹佰元", "壹佰"}, {"一万亿", "一万亿"},
	} {
		if got := tt.in[:ChineseSpan(tt.in)]; got != tt.want {
			t.Errorf("ChineseSpan(%q) spans %q, want %q", tt.in, got, tt.want)
		}
	}
}

// English words: the rule planner reads "and" after hundred, calculate
// does not ("add one hundred and five" adds).
func TestEnglish(t *testing.T) {
	rules := &Options{And: true}
	calc := &Options{}
	tests := []struct {
		in   string
		opts *Options
		want int64
		n    int
	}{
		{"five", calc, 5, 1}, {"zero", rules, 0, 1}, {"zero five", rules, 0, 1},
		{"twenty five", calc, 25, 2}, {"ninety nine plus", calc, 99, 2},
		{"one hundred five", rules, 105, 3}, {"one hundred twenty", rules, 120, 3},
		{"one hundred and five", rules, 105, 4}, {"one hundred and five", calc, 100, 2},
		{"two thousand and ten", rules, 2010, 4},
		{"a hundred", rules, 100, 2}, {"a thousand", calc, 1000, 2}, {"a dog", rules, 0, 0},
		{"three thousand", calc, 3000, 2}, {"nineteen hundred", calc, 1900, 2},
		{"two million three hundred thousand", calc, 2300000, 5},
		{"one trillion", calc, 1e12, 2},
		{"five three", calc, 5, 1}, {"five ten", rules, 5, 1}, {"twenty twenty", calc, 20, 1},
		{"twenty fifteen", calc, 20, 1}, {"hundred", calc, 0, 0}, {"thousand", calc, 0, 0},
		{"one thousand million", calc, 1000, 2}, {"one hundred hundred", calc, 100, 2},
		{"and five", rules, 0, 0}, {"", calc, 0, 0},
	}
	for _, tt := range tests {
		got, n := English(strings.Fields(tt.in), tt.opts)
		if got != tt.want || n != tt.n {
			t.Errorf("English(%q, And: %v) = %d, %d words; want %d, %d", tt.in, tt.opts.And, got, n, tt.want, tt.n)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, tt := range []struct {
		num, den int64
		want     string
	}{
		{1010, 1, "1010"}, {-314, 100, "-3.14"}, {1, 8, "0.125"}, {5, 2, "2.5"}, {1, 3, ""}, {1, 6, ""},
	} {
		got, ok := Decimal(big.NewRat(tt.num, tt.den))
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("Decimal(%d/%d) = %q, %v; want %q", tt.num, tt.den, got, ok, tt.want)
		}
	}
}

func TestMultiplier(t *testing.T) {
	for r, want := range map[rune]int64{'百': 100, '仟': 1000, '万': 1e4, '亿': 1e8, '十': 0, '三': 0} {
		if got, ok := Multiplier(r); got != want && ok || !ok && want != 0 {
			t.Errorf("Multiplier(%q) = %d, %v; want %d", r, got, ok, want)
		}
	}
}

// FuzzNumerals: neither reader panics; a span is whole characters; a value is never negative and is a finite decimal; whatever the
// rule planner's reading accepts, calculate's accepts with the same value.
func FuzzNumerals(f *testing.F) {
	for _, s := range []string{"一千零十", "两万三", "一亿五千万", "壹佰贰拾叁", "三点一四", "百分之五十", "十十",
		"万万", "一万亿", "二零二三", "one hundred and five", "a thousand", "nineteen hundred"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := ChineseSpan(s)
		if n < 0 || n > len(s) || !utf8.ValidString(s[:n]) {
			t.Fatalf("ChineseSpan(%q) = %d", s, n)
		}
		strict, err1 := ParseChinese(s, nil)
		loose, err2 := ParseChinese(s, &Options{BareUnits: true})
		var ne *Error
		if err1 != nil && !errors.As(err1, &ne) || err2 != nil && !errors.As(err2, &ne) {
			t.Fatalf("ParseChinese(%q): %v, %v", s, err1, err2)
		}
		if err1 == nil && (err2 != nil || strict.Cmp(loose) != 0) {
			t.Fatalf("ParseChinese(%q) = %v, but with BareUnits %v, %v", s, strict, loose, err2)
		}
		if err2 == nil {
			if _, ok := Decimal(loose); !ok || loose.Sign() < 0 {
				t.Fatalf("ParseChinese(%q) = %v", s, loose)
			}
		}
		words := strings.Fields(s)
		for _, o := range []*Options{nil, {And: true}} {
			if v, n := English(words, o); n < 0 || n > len(words) || v < 0 {
				t.Fatalf("English(%q) = %d, %d", words, v, n)
			}
		}
	})
}
