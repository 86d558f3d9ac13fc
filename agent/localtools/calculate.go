package localtools

import (
	"context"
	"math"
	"strconv"

	"github.com/devicectl/devicectl/tools"
)

// Number is a float64 that marshals an integral value as a JSON integer (15,
// not 15.0) and anything else in the shortest form that reads back the same.
type Number float64

// MarshalJSON writes n; it refuses nothing, since a Calculation never holds
// a non-finite number.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.AppendInt(nil, int64(f), 10), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// Calculation is calculate's answer, in seed 004's shape:
// {"result":15,"operation":"add","numbers":[5,10]}.
type Calculation struct {
	Result Number `json:"result"`
	// Operation is add, subtract, multiply, divide, modulo, power, sqrt or
	// cbrt when the expression uses that one operation (1+2+3 is "add"),
	// "number" for a lone number, and "expression" otherwise.
	Operation string `json:"operation"`
	// Numbers are the expression's numbers in the order its operations
	// take them: as written, except that "subtract 3 from 10" gives 10, 3.
	// Squared and cubed count their exponent, pi counts as 3.14159..., and
	// a minus sign right before a number makes it negative.
	Numbers []Number `json:"numbers"`
}

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
	c := &Calculation{Result: Number(tidy(v)), Operation: operation, Numbers: make([]Number, len(nums))}
	for i, x := range nums {
		c.Numbers[i] = Number(x)
	}
	return c, nil
}

// tidy rounds a fractional result to 15 significant digits, so that 0.1+0.2
// answers 0.3 and (0.1+0.2)*10 answers 3: binary floating point's last
// digit is noise to the person who asked. Integral values are left alone.
func tidy(v float64) float64 {
	if v == math.Trunc(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		return v
	}
	return r
}

type calculateInput struct {
	Expression string `json:"expression"`
}

func calculateTool() (*tools.Tool, error) {
	t, err := tools.Func(tools.Declaration{
		Name: "calculate",
		Description: "Computes an arithmetic expression exactly and returns " +
			`{"result": number, "operation": string, "numbers": [the numbers used]}. ` +
			"Use it for any arithmetic instead of computing in your head. " +
			"It accepts symbols (3*(4+5), 2^10, 2**10, 10%3, -2.5e3), English words " +
			"(add 5 and 10, subtract 3 from 10, 6 times 7, divide 12 by 4, 2 to the power of 8, square root of 16) " +
			"and Chinese (5加10, 十减三, 三乘以四, 12除以4, 2的3次方, 9的平方根). " +
			"operation is add, subtract, multiply, divide, modulo, power, sqrt or cbrt for a single operation, " +
			"expression for a compound one. Errors (division by zero, unbalanced parentheses, unknown words) name the position.",
		MainType: tools.Local,
		SubType:  tools.Query,
	}, func(ctx context.Context, in calculateInput) (*Calculation, error) {
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
