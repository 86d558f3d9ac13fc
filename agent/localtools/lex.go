package localtools

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"

	"github.com/devicectl/devicectl/agent/numerals"
)

// numeralOptions are calculate's readings of numerals: 万 alone is 10000,
// and "and" joins operands ("add one hundred and five" adds).
var numeralOptions = &numerals.Options{BareUnits: true}

// tokKind is what a token of an expression is.
type tokKind uint8

const (
	tEOF       tokKind = iota
	tNum               // val
	tOp                // a binary (or, for + and -, unary) operator: op
	tNeg               // 负, negative: unary minus only
	tLParen            // (
	tRParen            // )
	tAnd               // and , 和 与: separates operands of a word form
	tBy                // by
	tFrom              // from
	tTo                // to (add 5 to 10)
	tPrefix            // a word operation before its operands: add, sum of, subtract, ... (op)
	tRoot              // square root (of), sqrt, √, 根号, 平方根, 开方: op is opSqrt or opCbrt
	tPostfix           // squared, cubed, 平方, 立方: val is the exponent
	tDe                // 的, as in 2的3次方
	tCiFang            // 次方, 次幂
	tAggregate         // 的和, 的差, 的积, 的商 after "5和10": op
	tFiller            // a word that is dropped: 计算, 等于多少 (never leaves the lexer)
)

// op is an operation of the expression tree.
type op uint8

const (
	opNone op = iota
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opPow
	opNeg
	opSqrt
	opCbrt
	// Word forms that differ from the operation they compute only in how
	// their operands are written.
	opSum        // add X and Y, sum of X and Y
	opSubtract   // subtract X from Y
	opDifference // difference between X and Y
	opProduct    // multiply X by Y, product of X and Y
	opQuotient   // divide X by Y, quotient of X and Y
)

// opNames are the operation names calculate reports.
var opNames = map[op]string{
	opAdd: "add", opSub: "subtract", opMul: "multiply", opDiv: "divide", opMod: "modulo",
	opPow: "power", opNeg: "negate", opSqrt: "sqrt", opCbrt: "cbrt",
}

type token struct {
	kind tokKind
	op   op
	val  num
	pos  int    // 1-based rune position in the expression
	text string // as written (English words lowered), for matching and messages
	raw  string // English words as written, for messages
}

func (t token) String() string {
	if t.kind == tEOF {
		return "the end"
	}
	return strconv.Quote(t.text)
}

// normalize maps full-width forms (０-９, ＋, （, ...) and the usual math
// signs (×, ÷, −) to ASCII, one rune for one, so that positions still count
// the characters as written; letters are lowered.
func normalize(rs []rune) []rune {
	out := make([]rune, len(rs))
	for i, r := range rs {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 0x3000:
			r = ' '
		case r == '×' || r == '✕' || r == '·':
			r = '*'
		case r == '÷':
			r = '/'
		case r == '−' || r == '–' || r == '—':
			r = '-'
		case r == '’':
			r = '\''
		}
		out[i] = unicode.ToLower(r)
	}
	return out
}

// zhWords are the Chinese words calculate knows, matched longest first.
// Fillers ("计算", "等于多少") carry no meaning and are dropped.
var zhWords = map[string]token{
	"加": {kind: tOp, op: opAdd}, "加上": {kind: tOp, op: opAdd},
	"减": {kind: tOp, op: opSub}, "减去": {kind: tOp, op: opSub},
	"乘": {kind: tOp, op: opMul}, "乘以": {kind: tOp, op: opMul}, "乘上": {kind: tOp, op: opMul},
	"除以": {kind: tOp, op: opDiv},
	"模":  {kind: tOp, op: opMod}, "取模": {kind: tOp, op: opMod}, "取余": {kind: tOp, op: opMod},
	"负": {kind: tNeg},
	"的": {kind: tDe}, "次方": {kind: tCiFang}, "次幂": {kind: tCiFang},
	"平方": {kind: tPostfix, val: exactInt(2)}, "立方": {kind: tPostfix, val: exactInt(3)},
	"平方根": {kind: tRoot, op: opSqrt}, "开方": {kind: tRoot, op: opSqrt}, "开平方": {kind: tRoot, op: opSqrt},
	"开根号": {kind: tRoot, op: opSqrt},
	"圆周率": {kind: tNum, val: inexact(math.Pi)}, "π": {kind: tNum, val: inexact(math.Pi)}, "根号": {kind: tRoot, op: opSqrt}, "√": {kind: tRoot, op: opSqrt},
	"立方根": {kind: tRoot, op: opCbrt}, "开立方": {kind: tRoot, op: opCbrt},
	"和": {kind: tAnd}, "与": {kind: tAnd}, "跟": {kind: tAnd}, "、": {kind: tAnd},
	"的和": {kind: tAggregate, op: opAdd}, "之和": {kind: tAggregate, op: opAdd},
	"的差": {kind: tAggregate, op: opSub}, "之差": {kind: tAggregate, op: opSub},
	"的积": {kind: tAggregate, op: opMul}, "之积": {kind: tAggregate, op: opMul},
	"的商": {kind: tAggregate, op: opDiv}, "之商": {kind: tAggregate, op: opDiv},
}

func init() {
	for _, w := range []string{
		"请", "请问", "帮我", "帮忙", "计算", "计算一下", "算", "算一下", "算算", "一下", "求",
		"等于", "等于多少", "等于几", "是多少", "多少", "是", "几", "呢", "吗", "啊", "呀", "。",
	} {
		zhWords[w] = token{kind: tFiller}
	}
}

// maxZhWord is the length in runes of the longest entry of zhWords.
var maxZhWord = func() int {
	n := 0
	for w := range zhWords {
		n = max(n, len([]rune(w)))
	}
	return n
}()

// phrase is a sequence of English words that makes one token.
type phrase struct {
	words []string
	tok   token
}

// enPhrases are matched longest first at each word.
var enPhrases = []phrase{
	{[]string{"raised", "to", "the", "power", "of"}, token{kind: tOp, op: opPow}},
	{[]string{"to", "the", "power", "of"}, token{kind: tOp, op: opPow}},
	{[]string{"raised", "to"}, token{kind: tOp, op: opPow}},
	{[]string{"power"}, token{kind: tOp, op: opPow}},
	{[]string{"square", "root", "of"}, token{kind: tRoot, op: opSqrt}},
	{[]string{"square", "root"}, token{kind: tRoot, op: opSqrt}},
	{[]string{"sqrt", "of"}, token{kind: tRoot, op: opSqrt}},
	{[]string{"sqrt"}, token{kind: tRoot, op: opSqrt}},
	{[]string{"cube", "root", "of"}, token{kind: tRoot, op: opCbrt}},
	{[]string{"cube", "root"}, token{kind: tRoot, op: opCbrt}},
	{[]string{"cbrt"}, token{kind: tRoot, op: opCbrt}},
	{[]string{"divided", "by"}, token{kind: tOp, op: opDiv}},
	{[]string{"over"}, token{kind: tOp, op: opDiv}},
	{[]string{"multiplied", "by"}, token{kind: tOp, op: opMul}},
	{[]string{"times"}, token{kind: tOp, op: opMul}},
	{[]string{"x"}, token{kind: tOp, op: opMul}},
	{[]string{"plus"}, token{kind: tOp, op: opAdd}},
	{[]string{"minus"}, token{kind: tOp, op: opSub}},
	{[]string{"mod"}, token{kind: tOp, op: opMod}},
	{[]string{"modulo"}, token{kind: tOp, op: opMod}},
	{[]string{"negative"}, token{kind: tNeg}},
	{[]string{"pi"}, token{kind: tNum, val: inexact(math.Pi)}},
	{[]string{"squared"}, token{kind: tPostfix, val: exactInt(2)}},
	{[]string{"cubed"}, token{kind: tPostfix, val: exactInt(3)}},
	{[]string{"add"}, token{kind: tPrefix, op: opSum}},
	{[]string{"sum", "of"}, token{kind: tPrefix, op: opSum}},
	{[]string{"subtract"}, token{kind: tPrefix, op: opSubtract}},
	{[]string{"difference", "between"}, token{kind: tPrefix, op: opDifference}},
	{[]string{"difference", "of"}, token{kind: tPrefix, op: opDifference}},
	{[]string{"multiply"}, token{kind: tPrefix, op: opProduct}},
	{[]string{"product", "of"}, token{kind: tPrefix, op: opProduct}},
	{[]string{"divide"}, token{kind: tPrefix, op: opQuotient}},
	{[]string{"quotient", "of"}, token{kind: tPrefix, op: opQuotient}},
	{[]string{"and"}, token{kind: tAnd}},
	{[]string{"by"}, token{kind: tBy}},
	{[]string{"from"}, token{kind: tFrom}},
	{[]string{"to"}, token{kind: tTo}},
}

// enFillers are English words that are dropped.
var enFillers = map[string]bool{
	"what": true, "what's": true, "whats": true, "is": true, "calculate": true, "compute": true,
	"evaluate": true, "please": true, "the": true, "equals": true, "equal": true, "how": true,
	"much": true,
}

// wordsHint lists what calculate understands, for errors about unknown words.
const wordsHint = `numbers, + - * / % ^ ( ), and words such as add, sum of, subtract ... from, ` +
	`plus, minus, times, multiply ... by, divided by, to the power of, square root of, ` +
	`加, 减, 乘以, 除以, 的…次方, 平方根`

// ExprError is an expression calculate cannot compute. Err is one of the
// Err* sentinels, for errors.Is; Pos is the 1-based position (in
// characters) of the problem, 0 when it concerns the whole expression.
type ExprError struct {
	Pos int
	Msg string
	Err error
}

func (e *ExprError) Error() string {
	if e.Pos == 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s (at position %d)", e.Msg, e.Pos)
}

func (e *ExprError) Unwrap() error { return e.Err }

func errAt(pos int, kind error, format string, args ...any) *ExprError {
	return &ExprError{Pos: pos, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// lex turns an expression into tokens, ending with tEOF.
func lex(expr string) ([]token, error) {
	orig := []rune(expr)
	rs := normalize(orig)
	var toks []token
	var words []token // a run of English words, resolved when it ends
	flush := func() error {
		ts, err := resolveWords(words)
		words = words[:0]
		toks = append(toks, ts...)
		return err
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		pos := i + 1
		if isEnLetter(r) {
			j := i
			for j < len(rs) && (isEnLetter(rs[j]) || rs[j] == '\'' ||
				(rs[j] == '-' && j+1 < len(rs) && isEnLetter(rs[j+1]) && j > i)) {
				j++
			}
			// twenty-five: the parts of a hyphenated word are words.
			start := i
			for k := i; k <= j; k++ {
				if k == j || rs[k] == '-' {
					words = append(words, token{pos: start + 1, text: string(rs[start:k]), raw: string(orig[start:k])})
					start = k + 1
				}
			}
			i = j
			continue
		}
		if unicode.IsSpace(r) {
			i++ // spaces separate words of one phrase: "square root of"
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		switch {
		case r == '?' || r == '=' || r == '!':
			i++
		case r >= '0' && r <= '9' || r == '.' && i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9':
			t, n, err := lexNumber(rs, orig, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
		case r == '*' && i+1 < len(rs) && rs[i+1] == '*':
			toks = append(toks, token{kind: tOp, op: opPow, pos: pos, text: "**"})
			i += 2
		case strings.ContainsRune("+-*/%^", r):
			o := map[rune]op{'+': opAdd, '-': opSub, '*': opMul, '/': opDiv, '%': opMod, '^': opPow}[r]
			toks = append(toks, token{kind: tOp, op: o, pos: pos, text: string(orig[i])})
			i++
		case r == '(':
			toks = append(toks, token{kind: tLParen, pos: pos, text: string(orig[i])})
			i++
		case r == ')':
			toks = append(toks, token{kind: tRParen, pos: pos, text: string(orig[i])})
			i++
		case r == ',':
			toks = append(toks, token{kind: tAnd, pos: pos, text: string(orig[i])})
			i++
		default:
			if t, n := matchZh(rs, i); n > 0 {
				if t.kind != tFiller {
					t.pos, t.text = pos, string(orig[i:i+n])
					toks = append(toks, t)
				}
				i += n
				continue
			}
			if numerals.IsChinese(r) {
				t, n, err := lexZhNumber(rs, orig, i)
				if err != nil {
					return nil, err
				}
				toks = append(toks, t)
				i += n
				continue
			}
			if unicode.IsLetter(r) {
				// Show the whole unknown word, up to something known.
				j := i + 1
				for j < len(rs) && unicode.IsLetter(rs[j]) && !isEnLetter(rs[j]) && !numerals.IsChinese(rs[j]) {
					if _, n := matchZh(rs, j); n > 0 {
						break
					}
					j++
				}
				return nil, errAt(pos, ErrSyntax, "unknown word %q; calculate understands %s", string(orig[i:j]), wordsHint)
			}
			return nil, errAt(pos, ErrSyntax, "unexpected character %q", string(orig[i]))
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return append(toks, token{kind: tEOF, pos: len(rs) + 1}), nil
}

func isEnLetter(r rune) bool { return r >= 'a' && r <= 'z' }

// matchZh finds the longest Chinese word of zhWords at rs[i:].
func matchZh(rs []rune, i int) (token, int) {
	for n := min(maxZhWord, len(rs)-i); n > 0; n-- {
		if t, ok := zhWords[string(rs[i:i+n])]; ok {
			return t, n
		}
	}
	return token{}, 0
}

// lexNumber reads a decimal number at rs[i:] (digits, an optional fraction
// and exponent), and a Chinese multiplier after it (5万, 3千).
func lexNumber(rs, orig []rune, i int) (token, int, error) {
	j := i
	digits := func() {
		for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
			j++
		}
	}
	digits()
	if j < len(rs) && rs[j] == '.' {
		j++
		digits()
	}
	if j < len(rs) && rs[j] == 'e' {
		k := j + 1
		if k < len(rs) && (rs[k] == '+' || rs[k] == '-') {
			k++
		}
		if k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
			j = k
			digits()
		}
	}
	lit := string(rs[i:j])
	v, ok := parseDecimal(lit)
	if !ok {
		return token{}, 0, errAt(i+1, ErrOverflow, "number %s has more than %d digits", string(orig[i:j]), MaxDigits)
	}
	for ; j < len(rs); j++ {
		u, ok := numerals.Multiplier(rs[j])
		if !ok {
			break
		}
		v.Mul(v, new(big.Rat).SetInt64(u))
		if !ratFits(v) {
			return token{}, 0, errAt(i+1, ErrOverflow, "number %s has more than %d digits", string(orig[i:j+1]), MaxDigits)
		}
	}
	return token{kind: tNum, val: exact(v), pos: i + 1, text: string(orig[i:j])}, j - i, nil
}

// lexZhNumber reads the Chinese numeral at rs[i:] (三十, 一千零十,
// 三点五, 壹佰) through package numerals.
func lexZhNumber(rs, orig []rune, i int) (token, int, error) {
	rest := string(rs[i:])
	span := numerals.ChineseSpan(rest)
	n := len([]rune(rest[:span]))
	text := string(orig[i : i+n])
	v, err := numerals.ParseChinese(rest[:span], numeralOptions)
	var ne *numerals.Error
	if errors.As(err, &ne) {
		return token{}, 0, errAt(i+1, ErrSyntax, "%q is not a number: %s", text, ne.Reason)
	}
	if err != nil {
		return token{}, 0, errAt(i+1, ErrSyntax, "%q: %v", text, err)
	}
	if !ratFits(v) {
		return token{}, 0, errAt(i+1, ErrOverflow, "number %s has more than %d digits", text, MaxDigits)
	}
	return token{kind: tNum, val: exact(v), pos: i + 1, text: text}, n, nil
}

// resolveWords turns a run of English words into tokens: number words,
// phrases, fillers; anything else is an unknown word.
func resolveWords(words []token) ([]token, error) {
	var out []token
	texts := make([]string, len(words))
	for i, w := range words {
		texts[i] = w.text
	}
	for i := 0; i < len(words); {
		if v, n := numerals.English(texts[i:], numeralOptions); n > 0 {
			out = append(out, token{kind: tNum, val: exactInt(v), pos: words[i].pos, text: strings.Join(texts[i:i+n], " ")})
			i += n
			continue
		}
		if t, n := matchPhrase(texts[i:]); n > 0 {
			t.pos, t.text = words[i].pos, strings.Join(texts[i:i+n], " ")
			out = append(out, t)
			i += n
			continue
		}
		if enFillers[texts[i]] {
			i++
			continue
		}
		return out, errAt(words[i].pos, ErrSyntax, "unknown word %q; calculate understands %s", words[i].raw, wordsHint)
	}
	return out, nil
}

func matchPhrase(words []string) (token, int) {
	best, bestN := token{}, 0
	for _, p := range enPhrases {
		if len(p.words) <= len(words) && len(p.words) > bestN {
			match := true
			for k, w := range p.words {
				if words[k] != w {
					match = false
					break
				}
			}
			if match {
				best, bestN = p.tok, len(p.words)
			}
		}
	}
	return best, bestN
}
