package localtools

import (
	"errors"
	"math"
	"math/big"
	"unicode/utf8"
)

// Limits of an expression: a longer or deeper one is refused before any
// work, so that a hostile input costs little.
const (
	MaxExpressionLen   = 1000 // characters
	MaxExpressionDepth = 64   // nested parentheses, operations and powers
)

// The kinds of ExprError, for errors.Is.
var (
	ErrSyntax         = errors.New("syntax error")
	ErrDivisionByZero = errors.New("division by zero")
	ErrDomain         = errors.New("not a real number")
	ErrOverflow       = errors.New("number too large")
	ErrTooLong        = errors.New("expression too long")
)

// node is a node of the expression tree: a number (op == opNone) or an
// operation on its args.
type node struct {
	op   op
	val  num
	pos  int // of the operator, for errors
	args []*node
}

// Precedence of the binary operators; unary minus binds tighter than * but
// looser than ^, so -2^2 is -4 and 2^-1 is 0.5.
const (
	precAdd   = 1
	precMul   = 2
	precUnary = 3
	precPow   = 4
)

func precedence(o op) int {
	switch o {
	case opAdd, opSub:
		return precAdd
	case opMul, opDiv, opMod:
		return precMul
	case opPow:
		return precPow
	}
	return 0
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// enter counts one level of nesting; every recursive rule calls it.
func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > MaxExpressionDepth {
		return errAt(t.pos, ErrTooLong, "expression is nested more than %d levels deep", MaxExpressionDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parse reads a whole expression.
func parse(expr string) (*node, error) {
	if n := utf8.RuneCountInString(expr); n > MaxExpressionLen {
		return nil, &ExprError{Msg: "expression is longer than the limit of 1000 characters", Err: ErrTooLong}
	}
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	if toks[0].kind == tEOF {
		return nil, &ExprError{Msg: "expression is empty: give numbers and operators, e.g. \"3*(4+5)\" or \"add 5 and 10\"", Err: ErrSyntax}
	}
	p := &parser{toks: toks}
	n, err := p.list()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); t.kind {
	case tEOF:
		return n, nil
	case tRParen:
		return nil, errAt(t.pos, ErrSyntax, "unbalanced parentheses: %q has no matching \"(\"", t.text)
	default:
		return nil, errAt(t.pos, ErrSyntax, "unexpected %s after a complete expression", t)
	}
}

// list is binary ("and" binary)* [aggregate]: 5和10的和 is 5+10. Without an
// aggregate only one operand is allowed: "5 and 10" alone says no operation.
func (p *parser) list() (*node, error) {
	first, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	items := []*node{first}
	var and token
	for p.peek().kind == tAnd {
		and = p.next()
		n, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		items = append(items, n)
	}
	if t := p.peek(); t.kind == tAggregate {
		p.next()
		if len(items) < 2 {
			return nil, errAt(t.pos, ErrSyntax, "%s needs two numbers joined by 和, e.g. 5和10%s", t, t.text)
		}
		return fold(t.op, t.pos, items), nil
	}
	if len(items) > 1 {
		return nil, errAt(and.pos, ErrSyntax, "%s joins numbers only after an operation, e.g. \"add 5 and 10\" or 5和10的和", and)
	}
	return first, nil
}

// fold combines items left to right with o.
func fold(o op, pos int, items []*node) *node {
	n := items[0]
	for _, m := range items[1:] {
		n = &node{op: o, pos: pos, args: []*node{n, m}}
	}
	return n
}

// binary is Pratt's loop over the binary operators of precedence >= min.
func (p *parser) binary(min int) (*node, error) {
	if err := p.enter(p.peek()); err != nil {
		return nil, err
	}
	defer p.leave()
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp {
			return left, nil
		}
		prec := precedence(t.op)
		if prec < min {
			return left, nil
		}
		p.next()
		// ^ is right-associative: its right side may hold another ^.
		next := prec + 1
		if t.op == opPow {
			next = prec
		}
		right, err := p.binary(next)
		if err != nil {
			return nil, err
		}
		left = &node{op: t.op, pos: t.pos, args: []*node{left, right}}
	}
}

// unary is a prefix minus or plus, or a postfixed primary. A minus written
// right before a number makes a negative number, so "-5 + 3" adds -5 and 3.
func (p *parser) unary() (*node, error) {
	t := p.peek()
	if t.kind == tNeg || t.kind == tOp && (t.op == opSub || t.op == opAdd) {
		if err := p.enter(t); err != nil {
			return nil, err
		}
		defer p.leave()
		p.next()
		x, err := p.binary(precUnary)
		if err != nil {
			return nil, err
		}
		if t.kind == tOp && t.op == opAdd {
			return x, nil
		}
		if x.op == opNone {
			return &node{val: x.val.neg(), pos: t.pos}, nil
		}
		return &node{op: opNeg, pos: t.pos, args: []*node{x}}, nil
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	return p.postfix(x)
}

// postfix applies what follows an operand: squared, 的平方, 的3次方, 开方.
func (p *parser) postfix(x *node) (*node, error) {
	for {
		t := p.peek()
		switch t.kind {
		case tPostfix:
			p.next()
			x = &node{op: opPow, pos: t.pos, args: []*node{x, {val: t.val, pos: t.pos}}}
		case tRoot:
			p.next()
			x = &node{op: t.op, pos: t.pos, args: []*node{x}}
		case tDe:
			p.next()
			switch u := p.peek(); u.kind {
			case tPostfix, tRoot:
				continue // 3的平方, 9的平方根
			case tEOF:
				return nil, errAt(u.pos, ErrSyntax, "expected an exponent after %s, e.g. 2的3次方", t)
			}
			e, err := p.binary(precUnary)
			if err != nil {
				return nil, err
			}
			if u := p.next(); u.kind != tCiFang {
				return nil, errAt(u.pos, ErrSyntax, "expected 次方 after the exponent, e.g. 2的3次方, found %s", u)
			}
			x = &node{op: opPow, pos: t.pos, args: []*node{x, e}}
		default:
			return x, nil
		}
	}
}

// primary is a number, a parenthesised expression, a root, or a word form.
func (p *parser) primary() (*node, error) {
	t := p.next()
	switch t.kind {
	case tNum:
		return &node{val: t.val, pos: t.pos}, nil
	case tLParen:
		if err := p.enter(t); err != nil {
			return nil, err
		}
		defer p.leave()
		if p.peek().kind == tRParen {
			return nil, errAt(p.peek().pos, ErrSyntax, "empty parentheses")
		}
		x, err := p.list()
		if err != nil {
			return nil, err
		}
		if u := p.next(); u.kind != tRParen {
			if u.kind == tEOF {
				return nil, errAt(t.pos, ErrSyntax, "unbalanced parentheses: %q is never closed", t.text)
			}
			return nil, errAt(u.pos, ErrSyntax, "expected \")\" to close the %q at position %d, found %s", t.text, t.pos, u)
		}
		return x, nil
	case tRoot:
		// sqrt 16 + 9 is 13: the root takes an operand at the level of
		// unary minus and powers, like a function.
		x, err := p.binary(precUnary)
		if err != nil {
			return nil, err
		}
		return &node{op: t.op, pos: t.pos, args: []*node{x}}, nil
	case tPrefix:
		return p.wordForm(t)
	case tRParen:
		return nil, errAt(t.pos, ErrSyntax, "unbalanced parentheses: %q has no matching \"(\"", t.text)
	case tEOF:
		return nil, errAt(t.pos, ErrSyntax, "expected a number at the end of the expression")
	}
	return nil, errAt(t.pos, ErrSyntax, "expected a number, found %s", t)
}

// wordForm reads the operands of add, sum of, subtract, difference between,
// multiply, product of, divide and quotient of.
func (p *parser) wordForm(t token) (*node, error) {
	if err := p.enter(t); err != nil {
		return nil, err
	}
	defer p.leave()
	first, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	// The separators each form accepts between its operands.
	var seps []tokKind
	var o op
	switch t.op {
	case opSum:
		o, seps = opAdd, []tokKind{tAnd, tTo}
	case opSubtract:
		o, seps = opSub, []tokKind{tFrom}
	case opDifference:
		o, seps = opSub, []tokKind{tAnd}
	case opProduct:
		o, seps = opMul, []tokKind{tAnd, tBy}
	case opQuotient:
		o, seps = opDiv, []tokKind{tBy, tAnd}
	}
	if t.op == opQuotient && t.text == "divide" {
		seps = []tokKind{tBy} // "divide 10 and 2" does not say which is divided
	}
	items := []*node{first}
	for {
		u := p.peek()
		ok := false
		for _, s := range seps {
			ok = ok || u.kind == s
		}
		if !ok {
			break
		}
		p.next()
		n, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		items = append(items, n)
		// Only sums and products take more than two operands.
		if o != opAdd && o != opMul {
			break
		}
	}
	if len(items) < 2 {
		u := p.peek()
		want := map[op]string{opSum: "and", opSubtract: "from", opDifference: "and", opProduct: "by", opQuotient: "by"}[t.op]
		return nil, errAt(u.pos, ErrSyntax, "expected %q and a second number after %s, found %s", want, t, u)
	}
	if t.op == opSubtract {
		// subtract X from Y is Y - X.
		items[0], items[1] = items[1], items[0]
	}
	return fold(o, t.pos, items), nil
}

// eval computes n, exactly while it can (see num), refusing what has no
// finite real value and exact numbers of more than MaxDigits digits.
func eval(n *node) (num, error) {
	if n.op == opNone {
		if n.val.r == nil && (math.IsInf(n.val.f, 0) || math.IsNaN(n.val.f)) { // the lexer refuses these; be sure
			return num{}, errAt(n.pos, ErrOverflow, "number is too large")
		}
		return n.val, nil
	}
	args := make([]num, len(n.args))
	for i, a := range n.args {
		v, err := eval(a)
		if err != nil {
			return num{}, err
		}
		args[i] = v
	}
	switch n.op {
	case opNeg:
		return args[0].neg(), nil
	case opSqrt, opCbrt:
		return root(n, args[0])
	case opPow:
		return power(n, args[0], args[1])
	case opDiv, opMod:
		if args[1].isZero() {
			return num{}, errAt(n.pos, ErrDivisionByZero, "division by zero")
		}
	}
	a, b := args[0], args[1]
	if !a.isExact() || !b.isExact() {
		var v float64
		switch x, y := a.float(), b.float(); n.op {
		case opAdd:
			v = x + y
		case opSub:
			v = x - y
		case opMul:
			v = x * y
		case opDiv:
			v = x / y
		case opMod:
			v = math.Mod(x, y)
		}
		return finite(n, v)
	}
	z := new(big.Rat)
	switch n.op {
	case opAdd:
		z.Add(a.r, b.r)
	case opSub:
		z.Sub(a.r, b.r)
	case opMul:
		z.Mul(a.r, b.r)
	case opDiv:
		z.Quo(a.r, b.r)
	case opMod:
		// The remainder has the sign of the dividend, as math.Mod's:
		// a - b*trunc(a/b).
		q := new(big.Rat).Quo(a.r, b.r)
		t := new(big.Int).Quo(q.Num(), q.Denom())
		z.Sub(a.r, q.Mul(b.r, q.SetInt(t)))
	}
	return settle(n, z)
}

// settle keeps an exact result that fits. One that does not is refused
// when it is an integer (its digits are the answer), and computed in
// floating point otherwise (a fraction is shown rounded anyway).
func settle(n *node, z *big.Rat) (num, error) {
	if ratFits(z) {
		return exact(z), nil
	}
	if z.IsInt() {
		return num{}, tooLarge(n)
	}
	f, _ := z.Float64()
	return finiteNonzero(n, f)
}

func tooLarge(n *node) error {
	return errAt(n.pos, ErrOverflow, "result is too large: it has more than %d digits", MaxDigits)
}

// finite refuses a floating-point result that is not a finite number.
func finite(n *node, v float64) (num, error) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return num{}, errAt(n.pos, ErrOverflow, "result is too large")
	}
	return inexact(v), nil
}

// finiteNonzero is finite for a result that is not zero: one that
// floating point rounds to 0 is refused rather than shown as 0.
func finiteNonzero(n *node, v float64) (num, error) {
	if v == 0 {
		return num{}, errAt(n.pos, ErrOverflow, "result is too close to zero to show: below 1e-308")
	}
	return finite(n, v)
}

// power is a^b: exact for an exact base and an integer exponent, and for
// a rational exponent p/q when the q-th root of the base is rational
// ((-8)^(1/3) is -2, 4^0.5 is 2); in floating point otherwise.
func power(n *node, a, b num) (num, error) {
	if a.isZero() && b.negative() {
		return num{}, errAt(n.pos, ErrDivisionByZero, "division by zero: 0 to a negative power")
	}
	if a.isExact() && b.isExact() {
		base, e := a.r, b.r.Num()
		ok := true
		if q := b.r.Denom(); !b.r.IsInt() {
			// q is small when it matters: a root of more than 64 is
			// never rational for the numbers that fit.
			ok = q.IsInt64() && q.Int64() <= 64
			if ok {
				k := q.Int64()
				mag := new(big.Rat).Abs(base)
				if base.Sign() < 0 && k%2 == 0 {
					return num{}, errAt(n.pos, ErrDomain, "%s to the power %s is not a real number", a.r.RatString(), b.r.RatString())
				}
				var r *big.Rat
				if r, ok = ratRoot(mag, k); ok && base.Sign() < 0 {
					r.Neg(r)
				}
				base = r
			}
		}
		if ok {
			if z := ratPow(base, e); z != nil {
				return exact(z), nil
			}
			if base.IsInt() && e.Sign() > 0 {
				return num{}, tooLarge(n)
			}
			return finiteNonzero(n, floatPow(base, e))
		}
	}
	v := powFloat(a, b.float())
	if math.IsNaN(v) {
		return num{}, errAt(n.pos, ErrDomain, "%s to the power %s is not a real number", formatArg(a), formatArg(b))
	}
	if !a.isZero() {
		return finiteNonzero(n, v)
	}
	return finite(n, v)
}

// root is a square or cube root: exact when the root is rational.
func root(n *node, a num) (num, error) {
	if n.op == opSqrt && a.negative() {
		return num{}, errAt(n.pos, ErrDomain, "the square root of a negative number (%s) is not a real number", formatArg(a))
	}
	k := int64(2)
	if n.op == opCbrt {
		k = 3
	}
	if a.isExact() {
		if r, ok := ratRoot(new(big.Rat).Abs(a.r), k); ok {
			if a.r.Sign() < 0 {
				r.Neg(r)
			}
			return exact(r), nil
		}
	}
	mag := powFloat(num{r: absRat(a.r), f: math.Abs(a.f)}, 1/float64(k))
	if a.negative() {
		mag = -mag
	}
	return finite(n, mag)
}

func absRat(r *big.Rat) *big.Rat {
	if r == nil {
		return nil
	}
	return new(big.Rat).Abs(r)
}

// formatArg writes a number for an error message.
func formatArg(a num) string {
	s, _ := formatNum(a)
	return s
}

// describe names the operation of a tree and lists its numbers in order:
// the name of the one operation when there is only one kind (1+2+3 is
// "add"), "number" for a lone number, else "expression".
func describe(n *node) (string, []num) {
	ops := map[op]bool{}
	var nums []num
	var walk func(*node)
	walk = func(n *node) {
		if n.op == opNone {
			nums = append(nums, n.val)
			return
		}
		ops[n.op] = true
		for _, a := range n.args {
			walk(a)
		}
	}
	walk(n)
	switch len(ops) {
	case 0:
		return "number", nums
	case 1:
		for o := range ops {
			if o != opNeg {
				return opNames[o], nums
			}
		}
	}
	return "expression", nums
}
