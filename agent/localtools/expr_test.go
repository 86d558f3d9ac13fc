package localtools

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCalculate(t *testing.T) {
	tests := []struct {
		expr    string
		result  float64
		op      string
		numbers []float64
	}{
		// Symbols, precedence and associativity.
		{"1+2", 3, "add", []float64{1, 2}},
		{"1+2*3", 7, "expression", []float64{1, 2, 3}},
		{"(1+2)*3", 9, "expression", []float64{1, 2, 3}},
		{"3*(4+5)", 27, "expression", []float64{3, 4, 5}},
		{"10-4-3", 3, "subtract", []float64{10, 4, 3}},   // left-associative
		{"100/10/5", 2, "divide", []float64{100, 10, 5}}, // left-associative
		{"2^3^2", 512, "power", []float64{2, 3, 2}},      // right-associative
		{"2**10", 1024, "power", []float64{2, 10}},
		{"2*3^2", 18, "expression", []float64{2, 3, 2}},
		{"10 % 3", 1, "modulo", []float64{10, 3}},
		{"7 - 10 % 4 * 2", 3, "expression", []float64{7, 10, 4, 2}},
		{"1+2+3+4", 10, "add", []float64{1, 2, 3, 4}},
		{"((((5))))", 5, "number", []float64{5}},
		{"42", 42, "number", []float64{42}},
		// Unary minus: binds tighter than * but looser than ^.
		{"-5 + 3", -2, "add", []float64{-5, 3}},
		{"-2^2", -4, "expression", []float64{2, 2}},
		{"(-2)^2", 4, "power", []float64{-2, 2}},
		{"2^-1", 0.5, "power", []float64{2, -1}},
		{"3 - -2", 5, "subtract", []float64{3, -2}},
		{"--5", 5, "number", []float64{5}},
		{"-(2+3)", -5, "expression", []float64{2, 3}},
		{"2*-3", -6, "multiply", []float64{2, -3}},
		{"+4", 4, "number", []float64{4}},
		// Decimals and exponents; fractions rounded to 15 digits.
		{"2.5*4", 10, "multiply", []float64{2.5, 4}},
		{".5+.25", 0.75, "add", []float64{0.5, 0.25}},
		{"0.1+0.2", 0.3, "add", []float64{0.1, 0.2}},
		{"1e3/8", 125, "divide", []float64{1000, 8}},
		{"7/2", 3.5, "divide", []float64{7, 2}},
		{"1/3", 0.333333333333333, "divide", []float64{1, 3}},
		// Roots.
		{"sqrt(16)", 4, "sqrt", []float64{16}},
		{"sqrt 16 + 9", 13, "expression", []float64{16, 9}},
		{"√(16+9)", 5, "expression", []float64{16, 9}},
		{"cube root of 27", 3, "cbrt", []float64{27}},
		{"cbrt(-8)", -2, "cbrt", []float64{-8}},
		// English words.
		{"add 5 and 10", 15, "add", []float64{5, 10}},
		{"add 5 to 10", 15, "add", []float64{5, 10}},
		{"add 1, 2 and 3", 6, "add", []float64{1, 2, 3}},
		{"the sum of 2 and 3", 5, "add", []float64{2, 3}},
		{"5 plus 10", 15, "add", []float64{5, 10}},
		{"subtract 3 from 10", 7, "subtract", []float64{10, 3}},
		{"10 minus 3", 7, "subtract", []float64{10, 3}},
		{"difference between 10 and 4", 6, "subtract", []float64{10, 4}},
		{"multiply 6 by 7", 42, "multiply", []float64{6, 7}},
		{"multiply 2 and 3 and 4", 24, "multiply", []float64{2, 3, 4}},
		{"6 times 7", 42, "multiply", []float64{6, 7}},
		{"6 x 7", 42, "multiply", []float64{6, 7}},
		{"product of 3 and 4", 12, "multiply", []float64{3, 4}},
		{"divide 12 by 4", 3, "divide", []float64{12, 4}},
		{"12 divided by 4", 3, "divide", []float64{12, 4}},
		{"quotient of 12 and 4", 3, "divide", []float64{12, 4}},
		{"2 to the power of 8", 256, "power", []float64{2, 8}},
		{"2 raised to the power of 3", 8, "power", []float64{2, 3}},
		{"square root of 81", 9, "sqrt", []float64{81}},
		{"What is the square root of 144?", 12, "sqrt", []float64{144}},
		{"3 squared", 9, "power", []float64{3, 2}},
		{"2 cubed", 8, "power", []float64{2, 3}},
		{"10 mod 4", 2, "modulo", []float64{10, 4}},
		{"negative 3 times 2", -6, "multiply", []float64{-3, 2}},
		{"add 2*3 and 4", 10, "expression", []float64{2, 3, 4}},
		{"what is twenty-five times four?", 100, "multiply", []float64{25, 4}},
		{"add five and ten", 15, "add", []float64{5, 10}},
		{"one hundred five minus three thousand", -2895, "subtract", []float64{105, 3000}},
		{"Calculate 5 + 3 =", 8, "add", []float64{5, 3}},
		{"What’s 6 over 4?", 1.5, "divide", []float64{6, 4}},
		{"2*pi", 6.28318530717959, "multiply", []float64{2, math.Pi}},
		{"ADD 5 AND 10", 15, "add", []float64{5, 10}},
		// Chinese.
		{"5加10", 15, "add", []float64{5, 10}},
		{"十减三", 7, "subtract", []float64{10, 3}},
		{"三乘以四", 12, "multiply", []float64{3, 4}},
		{"三乘四", 12, "multiply", []float64{3, 4}},
		{"12除以4", 3, "divide", []float64{12, 4}},
		{"2的3次方", 8, "power", []float64{2, 3}},
		{"2的十次幂", 1024, "power", []float64{2, 10}},
		{"2的负1次方", 0.5, "power", []float64{2, -1}},
		{"3的平方", 9, "power", []float64{3, 2}},
		{"2的立方", 8, "power", []float64{2, 3}},
		{"9的平方根", 3, "sqrt", []float64{9}},
		{"根号16", 4, "sqrt", []float64{16}},
		{"27的立方根", 3, "cbrt", []float64{27}},
		{"三十加二十五", 55, "add", []float64{30, 25}},
		{"一百零五减两", 103, "subtract", []float64{105, 2}},
		{"5和10的和", 15, "add", []float64{5, 10}},
		{"10与4之差", 6, "subtract", []float64{10, 4}},
		{"计算5加10等于多少", 15, "add", []float64{5, 10}},
		{"请算一下三加四", 7, "add", []float64{3, 4}},
		{"负三加五", 2, "add", []float64{-3, 5}},
		{"5万加3千", 53000, "add", []float64{50000, 3000}},
		{"十模三", 1, "modulo", []float64{10, 3}},
		{"（1＋2）×3", 9, "expression", []float64{1, 2, 3}},
		{"１２÷４", 3, "divide", []float64{12, 4}},
		{"8 − 3", 5, "subtract", []float64{8, 3}},
		{"三点五乘二", 7, "multiply", []float64{3.5, 2}},
		{"2的3次方加1", 9, "expression", []float64{2, 3, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			c, err := Calculate(tt.expr)
			if err != nil {
				t.Fatalf("Calculate(%q): %v", tt.expr, err)
			}
			if float64(c.Result) != tt.result {
				t.Errorf("result = %v, want %v", c.Result, tt.result)
			}
			if c.Operation != tt.op {
				t.Errorf("operation = %q, want %q", c.Operation, tt.op)
			}
			got := make([]float64, len(c.Numbers))
			for i, n := range c.Numbers {
				got[i] = float64(n)
			}
			if !slices.Equal(got, tt.numbers) {
				t.Errorf("numbers = %v, want %v", got, tt.numbers)
			}
		})
	}
}

// The seed's own example, to the byte.
func TestCalculateSeedJSON(t *testing.T) {
	for _, expr := range []string{"add 5 and 10", "5加10", "5 + 10", "五加十"} {
		c, err := Calculate(expr)
		if err != nil {
			t.Fatalf("Calculate(%q): %v", expr, err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"result":15,"operation":"add","numbers":[5,10]}`; string(b) != want {
			t.Errorf("Calculate(%q) = %s, want %s", expr, b, want)
		}
	}
}

func TestNumberJSON(t *testing.T) {
	tests := []struct {
		n    float64
		want string
	}{
		{15, "15"},
		{-3, "-3"},
		{0, "0"},
		{2.5, "2.5"},
		{1 << 53, "9007199254740992"},
		{1e300, "1e+300"},
		{0.001, "0.001"},
	}
	for _, tt := range tests {
		b, err := json.Marshal(Number(tt.n))
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.n, b, err, tt.want)
		}
	}
}

func TestCalculateErrors(t *testing.T) {
	tests := []struct {
		expr string
		kind error
		pos  int    // 0: the whole expression
		msg  string // a part of the message
	}{
		{"", ErrSyntax, 0, "empty"},
		{"   ", ErrSyntax, 0, "empty"},
		{"计算", ErrSyntax, 0, "empty"},
		{"1/0", ErrDivisionByZero, 2, "division by zero"},
		{"5 % (2-2)", ErrDivisionByZero, 3, "division by zero"},
		{"12除以0", ErrDivisionByZero, 3, "division by zero"},
		{"divide 1 by 0", ErrDivisionByZero, 1, "division by zero"},
		{"0^-1", ErrDivisionByZero, 2, "division by zero"},
		{"(1+2", ErrSyntax, 1, `"(" is never closed`},
		{"2*((3+4)", ErrSyntax, 3, `"(" is never closed`},
		{"1+2)", ErrSyntax, 4, `")" has no matching "("`},
		{")", ErrSyntax, 1, `")" has no matching "("`},
		{"（1+2", ErrSyntax, 1, `"（" is never closed`},
		{"()", ErrSyntax, 2, "empty parentheses"},
		{"(1 2)", ErrSyntax, 4, `expected ")"`},
		{"foo + 1", ErrSyntax, 1, `unknown word "foo"`},
		{"1 + bar", ErrSyntax, 5, `unknown word "bar"`},
		{"2 Apples", ErrSyntax, 3, `unknown word "Apples"`},
		{"5加狗", ErrSyntax, 3, `unknown word "狗"`},
		{"1 $ 2", ErrSyntax, 3, `unexpected character "$"`},
		{"1 +", ErrSyntax, 4, "expected a number at the end"},
		{"1 2", ErrSyntax, 3, "unexpected \"2\""},
		{"* 3", ErrSyntax, 1, `expected a number, found "*"`},
		{"5 and 10", ErrSyntax, 3, `"and" joins numbers only after an operation`},
		{"subtract 3 and 10", ErrSyntax, 12, `expected "from"`},
		{"divide 10 and 2", ErrSyntax, 11, `expected "by"`},
		{"add 5", ErrSyntax, 6, `expected "and"`},
		{"2的3", ErrSyntax, 4, "expected 次方"},
		{"2的", ErrSyntax, 3, "expected an exponent"},
		{"5的和", ErrSyntax, 2, "needs two numbers"},
		{"sqrt(-4)", ErrDomain, 1, "square root of a negative number"},
		{"(-8)^(1/3)", ErrDomain, 5, "not a real number"},
		{"1e400", ErrOverflow, 1, "too large"},
		{"10^400", ErrOverflow, 3, "too large"},
		{"1e308*10", ErrOverflow, 6, "too large"},
		{"1+" + strings.Repeat("一", 400), ErrOverflow, 3, "too large"},
		{"1e300" + strings.Repeat("万", 10), ErrOverflow, 1, "too large"},
		{strings.Repeat("1+", 600) + "1", ErrTooLong, 0, "longer than the limit"},
		{strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), ErrTooLong, 0, "nested more than"},
		{strings.Repeat("-", 200) + "1", ErrTooLong, 0, "nested more than"},
		{strings.Repeat("2^", 200) + "2", ErrTooLong, 0, "nested more than"},
	}
	for _, tt := range tests {
		name := tt.expr
		if len(name) > 30 {
			name = name[:30]
		}
		t.Run(name, func(t *testing.T) {
			c, err := Calculate(tt.expr)
			if err == nil {
				b, _ := json.Marshal(c)
				t.Fatalf("Calculate(%q) = %s, want an error", tt.expr, b)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is not %v", err, tt.kind)
			}
			var ee *ExprError
			if !errors.As(err, &ee) {
				t.Fatalf("error %q is not an *ExprError", err)
			}
			if tt.pos != 0 && ee.Pos != tt.pos {
				t.Errorf("error %q at position %d, want %d", err, ee.Pos, tt.pos)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestZhNumerals(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"零", 0}, {"一", 1}, {"两", 2}, {"十", 10}, {"十五", 15}, {"二十", 20}, {"三十", 30},
		{"二十五", 25}, {"一百", 100}, {"一百零五", 105}, {"一百一十", 110}, {"三百五", 350},
		{"一千零五十", 1050}, {"两千三", 2300}, {"一万", 1e4}, {"一万二", 12000}, {"一万二千五", 12500},
		{"十万", 1e5}, {"一亿五千万", 1.5e8}, {"二零二三", 2023}, {"壹佰贰拾叁", 123}, {"万", 1e4},
		{"三点一四", 3.14}, {"零点五", 0.5},
	}
	for _, tt := range tests {
		rs := []rune(tt.in)
		got, n := scanZhNumber(rs, 0)
		if n != len(rs) || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("scanZhNumber(%q) = %v, %d runes; want %v, %d", tt.in, got, n, tt.want, len(rs))
		}
	}
}

func TestEnNumerals(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		n    int
	}{
		{"five", 5, 1}, {"twenty five", 25, 2}, {"one hundred five", 105, 3}, {"three thousand", 3000, 2},
		{"two million three hundred thousand", 2300000, 5}, {"five three", 5, 1}, {"twenty twenty", 20, 1},
		{"hundred", 0, 0}, {"zero", 0, 1}, {"ninety nine plus", 99, 2},
	}
	for _, tt := range tests {
		got, n := scanEnNumber(strings.Fields(tt.in))
		if got != tt.want || n != tt.n {
			t.Errorf("scanEnNumber(%q) = %v, %d; want %v, %d", tt.in, got, n, tt.want, tt.n)
		}
	}
}
