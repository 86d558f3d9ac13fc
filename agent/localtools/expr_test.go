package localtools

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCalculate(t *testing.T) {
	tests := []struct {
		expr    string
		result  string
		op      string
		numbers []string
	}{
		// Symbols, precedence and associativity.
		{"1+2", "3", "add", []string{"1", "2"}},
		{"1+2*3", "7", "expression", []string{"1", "2", "3"}},
		{"(1+2)*3", "9", "expression", []string{"1", "2", "3"}},
		{"3*(4+5)", "27", "expression", []string{"3", "4", "5"}},
		{"10-4-3", "3", "subtract", []string{"10", "4", "3"}},   // left-associative
		{"100/10/5", "2", "divide", []string{"100", "10", "5"}}, // left-associative
		{"2^3^2", "512", "power", []string{"2", "3", "2"}},      // right-associative
		{"2**10", "1024", "power", []string{"2", "10"}},
		{"2*3^2", "18", "expression", []string{"2", "3", "2"}},
		{"10 % 3", "1", "modulo", []string{"10", "3"}},
		{"7 - 10 % 4 * 2", "3", "expression", []string{"7", "10", "4", "2"}},
		{"1+2+3+4", "10", "add", []string{"1", "2", "3", "4"}},
		{"((((5))))", "5", "number", []string{"5"}},
		{"42", "42", "number", []string{"42"}},
		// Unary minus: binds tighter than * but looser than ^.
		{"-5 + 3", "-2", "add", []string{"-5", "3"}},
		{"-2^2", "-4", "expression", []string{"2", "2"}},
		{"(-2)^2", "4", "power", []string{"-2", "2"}},
		{"2^-1", "0.5", "power", []string{"2", "-1"}},
		{"3 - -2", "5", "subtract", []string{"3", "-2"}},
		{"--5", "5", "number", []string{"5"}},
		{"-(2+3)", "-5", "expression", []string{"2", "3"}},
		{"2*-3", "-6", "multiply", []string{"2", "-3"}},
		{"+4", "4", "number", []string{"4"}},
		// Decimals and exponents; fractions rounded to 15 digits.
		{"2.5*4", "10", "multiply", []string{"2.5", "4"}},
		{".5+.25", "0.75", "add", []string{"0.5", "0.25"}},
		{"0.1+0.2", "0.3", "add", []string{"0.1", "0.2"}},
		{"1e3/8", "125", "divide", []string{"1000", "8"}},
		{"7/2", "3.5", "divide", []string{"7", "2"}},
		{"1/3", "0.33333333333333333333", "divide", []string{"1", "3"}},
		// Roots.
		{"sqrt(16)", "4", "sqrt", []string{"16"}},
		{"sqrt 16 + 9", "13", "expression", []string{"16", "9"}},
		{"√(16+9)", "5", "expression", []string{"16", "9"}},
		{"cube root of 27", "3", "cbrt", []string{"27"}},
		{"cbrt(-8)", "-2", "cbrt", []string{"-8"}},
		// English words.
		{"add 5 and 10", "15", "add", []string{"5", "10"}},
		{"add 5 to 10", "15", "add", []string{"5", "10"}},
		{"add 1, 2 and 3", "6", "add", []string{"1", "2", "3"}},
		{"the sum of 2 and 3", "5", "add", []string{"2", "3"}},
		{"5 plus 10", "15", "add", []string{"5", "10"}},
		{"subtract 3 from 10", "7", "subtract", []string{"10", "3"}},
		{"10 minus 3", "7", "subtract", []string{"10", "3"}},
		{"difference between 10 and 4", "6", "subtract", []string{"10", "4"}},
		{"multiply 6 by 7", "42", "multiply", []string{"6", "7"}},
		{"multiply 2 and 3 and 4", "24", "multiply", []string{"2", "3", "4"}},
		{"6 times 7", "42", "multiply", []string{"6", "7"}},
		{"6 x 7", "42", "multiply", []string{"6", "7"}},
		{"product of 3 and 4", "12", "multiply", []string{"3", "4"}},
		{"divide 12 by 4", "3", "divide", []string{"12", "4"}},
		{"12 divided by 4", "3", "divide", []string{"12", "4"}},
		{"quotient of 12 and 4", "3", "divide", []string{"12", "4"}},
		{"2 to the power of 8", "256", "power", []string{"2", "8"}},
		{"2 raised to the power of 3", "8", "power", []string{"2", "3"}},
		{"square root of 81", "9", "sqrt", []string{"81"}},
		{"What is the square root of 144?", "12", "sqrt", []string{"144"}},
		{"3 squared", "9", "power", []string{"3", "2"}},
		{"2 cubed", "8", "power", []string{"2", "3"}},
		{"10 mod 4", "2", "modulo", []string{"10", "4"}},
		{"negative 3 times 2", "-6", "multiply", []string{"-3", "2"}},
		{"add 2*3 and 4", "10", "expression", []string{"2", "3", "4"}},
		{"what is twenty-five times four?", "100", "multiply", []string{"25", "4"}},
		{"add five and ten", "15", "add", []string{"5", "10"}},
		{"one hundred five minus three thousand", "-2895", "subtract", []string{"105", "3000"}},
		{"Calculate 5 + 3 =", "8", "add", []string{"5", "3"}},
		{"What’s 6 over 4?", "1.5", "divide", []string{"6", "4"}},
		{"2*pi", "6.28318530717959", "multiply", []string{"2", "3.141592653589793"}},
		{"ADD 5 AND 10", "15", "add", []string{"5", "10"}},
		// Chinese.
		{"5加10", "15", "add", []string{"5", "10"}},
		{"十减三", "7", "subtract", []string{"10", "3"}},
		{"三乘以四", "12", "multiply", []string{"3", "4"}},
		{"三乘四", "12", "multiply", []string{"3", "4"}},
		{"12除以4", "3", "divide", []string{"12", "4"}},
		{"2的3次方", "8", "power", []string{"2", "3"}},
		{"2的十次幂", "1024", "power", []string{"2", "10"}},
		{"2的负1次方", "0.5", "power", []string{"2", "-1"}},
		{"3的平方", "9", "power", []string{"3", "2"}},
		{"2的立方", "8", "power", []string{"2", "3"}},
		{"9的平方根", "3", "sqrt", []string{"9"}},
		{"根号16", "4", "sqrt", []string{"16"}},
		{"27的立方根", "3", "cbrt", []string{"27"}},
		{"三十加二十五", "55", "add", []string{"30", "25"}},
		{"一百零五减两", "103", "subtract", []string{"105", "2"}},
		{"5和10的和", "15", "add", []string{"5", "10"}},
		{"10与4之差", "6", "subtract", []string{"10", "4"}},
		{"计算5加10等于多少", "15", "add", []string{"5", "10"}},
		{"请算一下三加四", "7", "add", []string{"3", "4"}},
		{"负三加五", "2", "add", []string{"-3", "5"}},
		{"5万加3千", "53000", "add", []string{"50000", "3000"}},
		{"十模三", "1", "modulo", []string{"10", "3"}},
		{"（1＋2）×3", "9", "expression", []string{"1", "2", "3"}},
		{"１２÷４", "3", "divide", []string{"12", "4"}},
		{"8 − 3", "5", "subtract", []string{"8", "3"}},
		{"三点五乘二", "7", "multiply", []string{"3.5", "2"}},
		{"2的3次方加1", "9", "expression", []string{"2", "3", "1"}},
		{"一千零十加五", "1015", "add", []string{"1010", "5"}}, // 零 marks the missing hundreds
		{"两亿乘以三", "600000000", "multiply", []string{"200000000", "3"}},
		{"壹佰贰拾叁加一", "124", "add", []string{"123", "1"}},
		{"万加一", "10001", "add", []string{"10000", "1"}},
		{"add one hundred and five", "105", "add", []string{"100", "5"}}, // "and" joins operands
		// Exact: integers keep every digit, decimals are not binary fractions.
		{"99999999999*99999999999", "9999999999800000000001", "multiply", []string{"99999999999", "99999999999"}},
		{"2^64", "18446744073709551616", "power", []string{"2", "64"}},
		{"2^64-1", "18446744073709551615", "expression", []string{"2", "64", "1"}},
		{"12345678901234567890+1", "12345678901234567891", "add", []string{"12345678901234567890", "1"}},
		{"0.1*3", "0.3", "multiply", []string{"0.1", "3"}},
		{"1e400/1e399", "10", "divide", []string{"1" + strings.Repeat("0", 400), "1" + strings.Repeat("0", 399)}},
		{"2^-20", "9.5367431640625e-7", "power", []string{"2", "-20"}},
		{"1/8", "0.125", "divide", []string{"1", "8"}},
		{"7 % -3", "1", "modulo", []string{"7", "-3"}},
		{"-7 % 3", "-1", "modulo", []string{"-7", "3"}},
		{"5.5 % 2", "1.5", "modulo", []string{"5.5", "2"}},
		{"(-8)^(1/3)", "-2", "expression", []string{"-8", "1", "3"}},
		{"4^0.5", "2", "power", []string{"4", "0.5"}},
		{"sqrt(1/4)", "0.5", "expression", []string{"1", "4"}},
		{"sqrt(99999999999^2)", "99999999999", "expression", []string{"99999999999", "2"}},
		{"cbrt(-27/8)", "-1.5", "expression", []string{"-27", "8"}},
		// Not exact: computed in floating point, 15 digits.
		{"2^0.5", "1.4142135623731", "power", []string{"2", "0.5"}},
		{"sqrt(2)", "1.4142135623731", "sqrt", []string{"2"}},
		{"1.0001^100000", "22015.4560485522", "power", []string{"1.0001", "100000"}},
		{"(10^999)^(1/64)", "4067944321083050", "expression", []string{"10", "999", "1", "64"}}, // beyond float64, and back
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			c, err := Calculate(tt.expr)
			if err != nil {
				t.Fatalf("Calculate(%q): %v", tt.expr, err)
			}
			if string(c.Result) != tt.result {
				t.Errorf("result = %v, want %v", c.Result, tt.result)
			}
			if c.Operation != tt.op {
				t.Errorf("operation = %q, want %q", c.Operation, tt.op)
			}
			got := make([]string, len(c.Numbers))
			for i, n := range c.Numbers {
				got[i] = string(n)
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

// The whole answer, to the byte: exact results are JSON numbers with all
// their digits; rounded ones say so.
func TestCalculateJSON(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"99999999999*99999999999", `{"result":9999999999800000000001,"operation":"multiply","numbers":[99999999999,99999999999]}`},
		{"2^64", `{"result":18446744073709551616,"operation":"power","numbers":[2,64]}`},
		{"7/2", `{"result":3.5,"operation":"divide","numbers":[7,2]}`},
		{"1/3", `{"result":0.33333333333333333333,"operation":"divide","numbers":[1,3],"approximate":true,"fraction":"1/3"}`},
		{"-2/3", `{"result":-0.66666666666666666667,"operation":"divide","numbers":[-2,3],"approximate":true,"fraction":"-2/3"}`},
		{"10^30/3", `{"result":3.3333333333333333333e+29,"operation":"expression","numbers":[10,30,3],"approximate":true,"fraction":"1000000000000000000000000000000/3"}`},
		{"1/3^50", `{"result":1.3929555690985383463e-24,"operation":"expression","numbers":[1,3,50],"approximate":true,"fraction":"1/717897987691852588770249"}`},
		{"1/3^200", `{"result":3.7648619495990264199e-96,"operation":"expression","numbers":[1,3,200],"approximate":true}`},
		{"0.5^3000", `{"result":8.1285486255577354405e-904,"operation":"power","numbers":[0.5,3000],"approximate":true}`},
		{"sqrt(2)", `{"result":1.4142135623731,"operation":"sqrt","numbers":[2],"approximate":true}`},
		{"2*pi", `{"result":6.28318530717959,"operation":"multiply","numbers":[2,3.141592653589793],"approximate":true}`},
		{"0.0000001*3", `{"result":3e-7,"operation":"multiply","numbers":[1e-7,3]}`},
		{"-0.000000123", `{"result":-1.23e-7,"operation":"number","numbers":[-1.23e-7]}`},
		{"0.00001", `{"result":0.00001,"operation":"number","numbers":[0.00001]}`},
	}
	for _, tt := range tests {
		c, err := Calculate(tt.expr)
		if err != nil {
			t.Errorf("Calculate(%q): %v", tt.expr, err)
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Errorf("Calculate(%q): %v", tt.expr, err)
			continue
		}
		if string(b) != tt.want {
			t.Errorf("Calculate(%q) =\n %s\nwant\n %s", tt.expr, b, tt.want)
		}
	}
	// The largest integer there is room for, and one digit more.
	c, err := Calculate("10^999")
	if err != nil || len(c.Result) != MaxDigits || c.Approximate {
		t.Errorf("10^999: %d digits, approximate %v, %v", len(c.Result), c != nil && c.Approximate, err)
	}
	if _, err := Calculate("10^1000"); !errors.Is(err, ErrOverflow) {
		t.Errorf("10^1000: %v, want ErrOverflow", err)
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
		{"(-4)^(1/2)", ErrDomain, 5, "not a real number"},
		{"(-4)^0.5", ErrDomain, 5, "not a real number"},
		{"(-2)^0.3", ErrDomain, 5, "not a real number"},
		{"1e1001", ErrOverflow, 1, "has more than 1000 digits"},
		{"1e-1001", ErrOverflow, 1, "has more than 1000 digits"},
		{"1e99999999999999999999", ErrOverflow, 1, "has more than 1000 digits"},
		{"10^1000", ErrOverflow, 3, "more than 1000 digits"},
		{"9^9^9^9", ErrOverflow, 4, "more than 1000 digits"},
		{"2^2^2^2^2^2", ErrOverflow, 4, "more than 1000 digits"},
		{"(10^999)*(10^999)", ErrOverflow, 9, "more than 1000 digits"},
		{"0.5^100000", ErrOverflow, 4, "too close to zero"},
		{"1.5^100000", ErrOverflow, 4, "too large"},
		{"1e990" + strings.Repeat("万", 3), ErrOverflow, 1, "has more than 1000 digits"},
		{"十十", ErrSyntax, 1, `"十十" is not a number`},
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
