package localtools

import (
	"context"
	"encoding/json"

	"github.com/devicectl/devicectl/tools"
)

// Calculation is calculate's answer, in seed 004's shape:
// {"result":15,"operation":"add","numbers":[5,10]}.
type Calculation struct {
	// Result is exact whenever the expression allows: every digit of an
	// integer (2^64 is 18446744073709551616) or of a finite decimal
	// (0.125). A fraction with no finite decimal form is rounded to 20
	// significant digits (1/3), and a result that needed a root or power
	// with no rational value, or π, to 15; Approximate then says so.
	Result json.Number `json:"result"`
	// Operation is add, subtract, multiply, divide, modulo, power, sqrt or
	// cbrt when the expression uses that one operation (1+2+3 is "add"),
	// "number" for a lone number, and "expression" otherwise.
	Operation string `json:"operation"`
	// Numbers are the expression's numbers in the order its operations
	// take them: as written, except that "subtract 3 from 10" gives 10, 3.
	// Squared and cubed count their exponent, pi counts as 3.14159..., and
	// a minus sign right before a number makes it negative.
	Numbers []json.Number `json:"numbers"`
	// Approximate is true when Result is not the exact value.
	Approximate bool `json:"approximate,omitempty"`
	// Fraction is the exact value of a rounded Result that is a fraction,
	// as "numerator/denominator" ("1/3"), when it is at most 64
	// characters long.
	Fraction string `json:"fraction,omitempty"`
}

// maxFraction bounds Calculation.Fraction.
const maxFraction = 64

// Calculate parses and computes an arithmetic expression, written with
// symbols (3*(4+5), 2**10), English words (add 5 and 10, square root of 16)
// or Chinese (5加10, 三乘以四, 2的3次方). It evaluates nothing but this
// grammar. Failures are *ExprError values naming the position of the
// problem; see the package documentation for the grammar.
func Calculate(expression string) (*Calculation, error) {
	tree, err := parse(expression)
	if err != nil {
		return nil, err
	}
	v, err := eval(tree)
	if err != nil {
		return nil, err
	}
	operation, nums := describe(tree)
	text, approx := formatNum(v)
	c := &Calculation{Result: json.Number(text), Operation: operation, Numbers: make([]json.Number, len(nums)), Approximate: approx}
	if approx && v.isExact() {
		if f := v.r.RatString(); len(f) <= maxFraction {
			c.Fraction = f
		}
	}
	for i, x := range nums {
		if x.isExact() {
			c.Numbers[i] = json.Number(formatArg(x))
		} else {
			c.Numbers[i] = json.Number(formatFloat(x.f)) // π, with all its float64 digits
		}
	}
	return c, nil
}

type calculateInput struct {
	Expression string `json:"expression"`
}

func calculateTool() (*tools.Tool, error) {
	t, err := tools.Func(tools.LocalQuery(ToolCalculate,
		"Computes an arithmetic expression exactly and returns "+
			`{"result": number, "operation": string, "numbers": [the numbers used]}; `+
			"integers keep all their digits (up to 1000), and a result that had to be rounded (1/3, sqrt(2)) "+
			`comes with "approximate": true and, for a fraction, "fraction": "1/3". `+
			"Use it for any arithmetic instead of computing in your head. "+
			"It accepts symbols (3*(4+5), 2^10, 2**10, 10%3, -2.5e3), English words "+
			"(add 5 and 10, subtract 3 from 10, 6 times 7, divide 12 by 4, 2 to the power of 8, square root of 16) "+
			"and Chinese (5加10, 十减三, 三乘以四, 12除以4, 2的3次方, 9的平方根). "+
			"operation is add, subtract, multiply, divide, modulo, power, sqrt or cbrt for a single operation, "+
			"expression for a compound one. Errors (division by zero, unbalanced parentheses, unknown words) name the position."),
		func(ctx context.Context, in calculateInput) (*Calculation, error) {
			return Calculate(in.Expression)
		})
	if err != nil {
		return nil, err
	}
	p := t.Parameters.Properties["expression"]
	p.Description = `The expression, e.g. "add 5 and 10", "3*(4+5)" or "5加10".`
	p.MinLength, p.MaxLength = ptr(1), ptr(MaxExpressionLen)
	return t, nil
}

func ptr[T any](v T) *T { return &v }
