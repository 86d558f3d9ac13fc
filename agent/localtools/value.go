package localtools

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/agent/numerals"
)

// MaxDigits bounds the numerator and the denominator of every exact
// number calculate holds, written or computed: 9^9^9^9 is refused before
// any work rather than filling memory.
const MaxDigits = 1000

// maxBits is the bit length above which a number surely has more than
// MaxDigits digits (10^1000 < 2^3322).
const maxBits = 3322

// roundDigits is how many significant digits a fraction with no finite
// decimal form (1/3) is shown with.
const roundDigits = 20

// num is a value of the calculation: exact (a rational) while it can be,
// a float64 once something with no exact rational value entered it (a
// root that is not exact, a fractional power, π).
type num struct {
	r *big.Rat // the exact value; nil when inexact
	f float64  // the value when r is nil
}

func exact(r *big.Rat) num   { return num{r: r} }
func inexact(f float64) num  { return num{f: f} }
func exactInt(i int64) num   { return num{r: new(big.Rat).SetInt64(i)} }
func (x num) isExact() bool  { return x.r != nil }
func (x num) isZero() bool   { return x.r != nil && x.r.Sign() == 0 || x.r == nil && x.f == 0 }
func (x num) negative() bool { return x.r != nil && x.r.Sign() < 0 || x.r == nil && x.f < 0 }

func (x num) float() float64 {
	if x.r == nil {
		return x.f
	}
	f, _ := x.r.Float64()
	return f
}

func (x num) neg() num {
	if x.r == nil {
		return inexact(-x.f)
	}
	return exact(new(big.Rat).Neg(x.r))
}

// intFits reports whether n has at most MaxDigits digits.
func intFits(n *big.Int) bool {
	switch b := n.BitLen(); {
	case b < maxBits-4:
		return true
	case b > maxBits:
		return false
	}
	return len(new(big.Int).Abs(n).String()) <= MaxDigits
}

func ratFits(r *big.Rat) bool { return intFits(r.Num()) && intFits(r.Denom()) }

// parseDecimal reads a decimal literal (12, 2.5, .5, 1e3, 1.5e-3) exactly.
// ok is false when its value would have more than MaxDigits digits.
func parseDecimal(lit string) (r *big.Rat, ok bool) {
	mant, expText, _ := strings.Cut(lit, "e")
	exp := 0
	if expText != "" {
		e, err := strconv.Atoi(expText)
		if err != nil || e > 10*MaxDigits || e < -10*MaxDigits {
			return nil, false
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return new(big.Rat), true
	}
	// The value is digits * 10^scale.
	scale := exp - len(frac)
	if len(digits)+max(scale, 0) > MaxDigits || -scale > MaxDigits {
		return nil, false
	}
	n, _ := new(big.Int).SetString(digits, 10)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(scale))), nil)
	if scale >= 0 {
		return new(big.Rat).SetInt(n.Mul(n, p)), true
	}
	return new(big.Rat).SetFrac(n, p), true
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// intPow returns base^e for e >= 0, or nil when the result would have
// more than MaxDigits digits. It computes nothing it would then refuse.
func intPow(base *big.Int, e *big.Int) *big.Int {
	if base.BitLen() <= 1 || e.Sign() == 0 { // 0, 1, -1, or x^0
		switch {
		case e.Sign() == 0:
			return big.NewInt(1)
		case base.Sign() == 0:
			return big.NewInt(0)
		case base.Sign() < 0 && e.Bit(0) == 1:
			return big.NewInt(-1)
		}
		return big.NewInt(1)
	}
	// base has at least 2 bits, so base^e has more than e bits.
	if !e.IsInt64() || e.Int64() > maxBits || int64(base.BitLen()-1)*e.Int64() > maxBits {
		return nil
	}
	p := new(big.Int).Exp(base, e, nil)
	if !intFits(p) {
		return nil
	}
	return p
}

// ratPow returns x^e exactly for an integer e, or nil when the result
// would not fit. x is not 0 when e < 0.
func ratPow(x *big.Rat, e *big.Int) *big.Rat {
	ae := new(big.Int).Abs(e)
	n, d := intPow(x.Num(), ae), intPow(x.Denom(), ae)
	if n == nil || d == nil {
		return nil
	}
	if e.Sign() < 0 {
		n, d = d, n
		if d.Sign() < 0 {
			n.Neg(n)
			d.Neg(d)
		}
	}
	return new(big.Rat).SetFrac(n, d)
}

// intRoot returns the k-th root of n >= 0 when it is an integer.
func intRoot(n *big.Int, k int64) (*big.Int, bool) {
	if n.Sign() == 0 || n.Cmp(big.NewInt(1)) == 0 {
		return new(big.Int).Set(n), true
	}
	var x *big.Int
	if k == 2 {
		x = new(big.Int).Sqrt(n)
	} else {
		// Newton from above: x = ((k-1)x + n/x^(k-1)) / k until it stops falling.
		x = new(big.Int).Lsh(big.NewInt(1), uint(int64(n.BitLen())/k+1))
		km1, kb := big.NewInt(k-1), big.NewInt(k)
		for {
			y := new(big.Int).Exp(x, km1, nil)
			y.Quo(n, y)
			y.Add(y, new(big.Int).Mul(km1, x))
			y.Quo(y, kb)
			if y.Cmp(x) >= 0 {
				break
			}
			x = y
		}
	}
	return x, new(big.Int).Exp(x, big.NewInt(k), nil).Cmp(n) == 0
}

// ratRoot returns the k-th root of x >= 0 when it is rational.
func ratRoot(x *big.Rat, k int64) (*big.Rat, bool) {
	n, ok1 := intRoot(x.Num(), k)
	d, ok2 := intRoot(x.Denom(), k)
	if !ok1 || !ok2 {
		return nil, false
	}
	return new(big.Rat).SetFrac(n, d), true
}

// formatNum writes x as a JSON number: an exact value with all its digits
// (9999999999800000000001, 0.125; exponent form below 10^-6, see
// shortDecimal) when they are at most MaxDigits; another exact value
// rounded to roundDigits significant digits; an inexact one rounded to 15,
// the digits float64 arithmetic gets right. approx says the text is not
// the exact value.
func formatNum(x num) (text string, approx bool) {
	if x.r == nil {
		return formatFloat(tidy(x.f)), true
	}
	if d, ok := numerals.Decimal(x.r); ok && significant(d) <= MaxDigits {
		return shortDecimal(d), false
	}
	f := new(big.Float).SetPrec(256).SetRat(x.r)
	return f.Text('g', roundDigits), true
}

// significant counts the digits of a decimal from its first non-zero one.
func significant(d string) int {
	return len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(d), "0"))
}

// floatPow is x^e in floating point, rounded once: powers taken in
// float64 lose a digit per squaring (1.0001^100000 would be off in the
// eleventh), these in a float wide enough to keep 15.
func floatPow(x *big.Rat, e *big.Int) float64 {
	prec := uint(128 + e.BitLen())
	b := new(big.Float).SetPrec(prec).SetRat(x)
	r := new(big.Float).SetPrec(prec).SetInt64(1)
	ae := new(big.Int).Abs(e)
	for i := ae.BitLen() - 1; i >= 0; i-- {
		r.Mul(r, r)
		if ae.Bit(i) == 1 {
			r.Mul(r, b)
		}
	}
	if e.Sign() < 0 {
		r.Quo(new(big.Float).SetPrec(prec).SetInt64(1), r)
	}
	f, _ := r.Float64()
	return f
}

// powFloat is a^y in floating point for any a, also an exact one that
// float64 cannot hold ((10^999)^(1/64) is about 4.2e15): through its
// binary exponent: a = m * 2^k, a^y = m^y * 2^(k y).
func powFloat(a num, y float64) float64 {
	f := a.float()
	if a.r == nil || !math.IsInf(f, 0) && (f != 0 || a.r.Sign() == 0) {
		return math.Pow(f, y)
	}
	if a.r.Sign() < 0 {
		return math.NaN() // only odd roots of negatives are real; the callers take those as -(-a)^y
	}
	mant := new(big.Float)
	k := new(big.Float).SetRat(a.r).MantExp(mant)
	m, _ := mant.Float64()
	// 2^(k y) as 2^ip * 2^fp: exact in ip, so that only fp's rounding is lost.
	ip, fp := math.Modf(float64(k) * y)
	if math.Abs(ip) > 1<<20 {
		return math.Pow(2, ip) // far outside float64's range either way
	}
	return math.Ldexp(math.Pow(m, y)*math.Exp2(fp), int(ip))
}

// shortDecimal writes an exact decimal below 10^-6 in exponent form, as
// JavaScript does: 0.0000001 is 1e-7, with every digit kept.
func shortDecimal(d string) string {
	sign := ""
	if strings.HasPrefix(d, "-") {
		sign, d = "-", d[1:]
	}
	frac, ok := strings.CutPrefix(d, "0.")
	if !ok {
		return sign + d
	}
	sig := strings.TrimLeft(frac, "0")
	zeros := len(frac) - len(sig)
	if zeros < 6 {
		return sign + d
	}
	out := sig[:1]
	if len(sig) > 1 {
		out += "." + sig[1:]
	}
	return sign + out + "e-" + strconv.Itoa(zeros+1)
}

// formatFloat writes f as a JSON number: an integer without a fraction
// (15, not 15.0) as long as float64 holds it exactly.
func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// tidy rounds an inexact result to 15 significant digits, so that
// sqrt(2)*sqrt(2) answers 2: binary floating point's last digit is noise
// to the person who asked.
func tidy(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		return v
	}
	return r
}
