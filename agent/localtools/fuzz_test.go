package localtools

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// FuzzCalculate: whatever the input, Calculate neither panics nor answers a
// non-finite number, its errors are *ExprError with a position inside the
// expression, and its answers marshal.
func FuzzCalculate(f *testing.F) {
	for _, s := range []string{
		"add 5 and 10", "3*(4+5)", "5加10", "2的3次方", "一百零五", "-2^-2", "sqrt(2)", "1/0",
		"((1)", "subtract 3 from 10", "5和10的和", "２＋３", "1e308*10", "twenty-five times four",
		"9的平方根", "负三", "(-8)^(1/3)", "三点五", "5万", "add 1, 2 and 3", "",
		"9^9^9^9", "99999999999*99999999999", "1/3", "2^0.5", "一千零十加五", "1e-7", "0.5^3000", "十十",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := Calculate(expr)
		if err != nil {
			var ee *ExprError
			if !errors.As(err, &ee) {
				t.Fatalf("Calculate(%q): error %v is not an *ExprError", expr, err)
			}
			if n := len([]rune(expr)); ee.Pos < 0 || ee.Pos > n+1 {
				t.Fatalf("Calculate(%q): position %d outside 0..%d", expr, ee.Pos, n+1)
			}
			return
		}
		// Every number is a JSON number of bounded size; an exact result
		// reads back as the fraction it stands for.
		for _, n := range append([]json.Number{c.Result}, c.Numbers...) {
			if len(n) > MaxDigits+32 {
				t.Fatalf("Calculate(%q): a number of %d characters", expr, len(n))
			}
			if _, ok := new(big.Rat).SetString(string(n)); !ok {
				t.Fatalf("Calculate(%q): number %q", expr, n)
			}
		}
		if c.Fraction != "" {
			f, ok := new(big.Rat).SetString(c.Fraction)
			if !ok || !c.Approximate || f.IsInt() {
				t.Fatalf("Calculate(%q): fraction %q, approximate %v", expr, c.Fraction, c.Approximate)
			}
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Calculate(%q): %v", expr, err)
		}
		if !json.Valid(b) {
			t.Fatalf("Calculate(%q) = %s: not JSON", expr, b)
		}
	})
}

// FuzzText: Guide and Split never panic, and answer every non-blank query
// with four questions and at least one complete dimension.
func FuzzText(f *testing.F) {
	for _, s := range []string{"人工智能", "什么是强化学习以及它的应用", "Python和Java的区别", "what is AI and its uses?",
		"pros and cons", "它", "?？", "İstanbul and its history", "的的的和和"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		g, gerr := Guide(q)
		d, serr := Split(q)
		if (gerr == nil) != (serr == nil) {
			t.Fatalf("Guide and Split disagree on %q: %v, %v", q, gerr, serr)
		}
		if gerr != nil {
			return
		}
		if strings.Count(g, "\n") != 4 {
			t.Fatalf("Guide(%q) = %q", q, g)
		}
		if len(d.Dimensions) == 0 {
			t.Fatalf("Split(%q): no dimensions", q)
		}
		for _, x := range d.Dimensions {
			if x.Name == "" || strings.TrimSpace(x.Query) == "" || x.Explanation == "" {
				t.Fatalf("Split(%q): incomplete %+v", q, x)
			}
		}
	})
}
