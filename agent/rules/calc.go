package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/agent/localtools"
)

// The arithmetic the planner recognises is rewritten into plain ASCII symbols (5+10, 3*(4+5))
// before it goes to the calculate tool, so that the planner does not depend on which
// phrasings the tool's own parser accepts.

const numRE = `(-?\d+(?:\.\d+)?)`

// calcForms are the English phrasings where the operation comes first.
var calcForms = []struct {
	re     *regexp.Regexp
	op     string
	swap   bool // "subtract 3 from 10" is 10-3
	noWrap bool
}{
	{re: regexp.MustCompile(`^(?:add|sum|the sum of|sum of) ` + numRE + ` (?:and|to|plus|with) ` + numRE + `$`), op: "+"},
	{re: regexp.MustCompile(`^(?:subtract|take away|take) ` + numRE + ` from ` + numRE + `$`), op: "-", swap: true},
	{re: regexp.MustCompile(`^(?:the )?difference (?:between|of) ` + numRE + ` and ` + numRE + `$`), op: "-"},
	{re: regexp.MustCompile(`^(?:multiply|the product of|product of) ` + numRE + ` (?:by|and|with|times) ` + numRE + `$`), op: "*"},
	{re: regexp.MustCompile(`^(?:divide) ` + numRE + ` by ` + numRE + `$`), op: "/"},
	{re: regexp.MustCompile(`^(?:the )?quotient of ` + numRE + ` (?:and|by) ` + numRE + `$`), op: "/"},
}

var (
	calcPrefixes = []string{"what is ", "what's ", "whats ", "calculate ", "compute ", "how much is ", "tell me ",
		"work out ", "solve ", "evaluate ", "请问", "请计算", "计算一下", "计算", "算一下", "算算", "帮我算", "算", "求"}
	calcSuffixes = []string{"等于多少", "等于几", "是多少", "是几", "得多少", "得几", "多少", "等于", "=", "equals",
		" is what", "?"}
	// calcWords turns operator words into symbols. strings.Replacer tries the olds in order at
	// each position, so the longer phrasings come first.
	calcWords = strings.NewReplacer(
		" multiplied by ", "*", " divided by ", "/", " plus ", "+", " minus ", "-", " times ", "*",
		" over ", "/", " x ", "*",
		"加上", "+", "加", "+", "减去", "-", "减", "-", "乘以", "*", "乘上", "*", "乘", "*", "除以", "/",
		"负", "-", "括号", "",
	)
	calcChars = regexp.MustCompile(`^[0-9.+\-*/() ]+$`)
)

// maxCalcLen bounds the expression handed to the tool.
const maxCalcLen = 200

// arithmetic rewrites what was said, with its numbers already in digits, as an expression in
// ASCII symbols. It reports false unless the text is arithmetic and nothing else: at least
// one binary operator between numbers, balanced parentheses.
func arithmetic(num string) (string, bool) {
	s := strings.TrimSpace(num)
	for changed := true; changed; {
		changed = false
		for _, p := range calcPrefixes {
			if r, ok := strings.CutPrefix(s, p); ok && r != "" {
				s, changed = strings.TrimSpace(r), true
			}
		}
		for _, p := range calcSuffixes {
			if r, ok := strings.CutSuffix(s, p); ok && r != "" {
				s, changed = strings.TrimSpace(r), true
			}
		}
	}
	for _, f := range calcForms {
		if m := f.re.FindStringSubmatch(s); m != nil {
			a, b := m[1], m[2]
			if f.swap {
				a, b = b, a
			}
			return paren(a) + f.op + paren(b), true
		}
	}
	s = calcWords.Replace(s)
	if len(s) > maxCalcLen || !calcChars.MatchString(s) {
		return "", false
	}
	s = strings.ReplaceAll(s, " ", "")
	if !wellFormed(s) {
		return "", false
	}
	return s, true
}

// paren wraps a negative operand: 10-(-3).
func paren(n string) string {
	if strings.HasPrefix(n, "-") {
		return "(" + n + ")"
	}
	return n
}

// wellFormed checks the shape of an expression of numbers, + - * / and parentheses: operands
// and binary operators alternate, a minus may be unary, parentheses balance, and there is at
// least one binary operator.
func wellFormed(s string) bool {
	depth, binary := 0, 0
	operand := false // the last token was a number or ")"
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c == '.':
			if operand {
				return false
			}
			j, dots := i, 0
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				if s[j] == '.' {
					dots++
				}
				j++
			}
			if dots > 1 || s[i] == '.' || s[j-1] == '.' {
				return false
			}
			operand, i = true, j
			continue
		case c == '(':
			if operand {
				return false
			}
			depth++
		case c == ')':
			if !operand || depth == 0 {
				return false
			}
			depth--
		case c == '-' && !operand: // unary minus
		default: // + - * /
			if !operand {
				return false
			}
			binary++
			operand = false
		}
		i++
	}
	return depth == 0 && operand && binary > 0
}

// calc has the calculate tool work out expr and says the result.
func (r *turn) calc(expr string) error {
	d, ok := r.decl[localtools.ToolCalculate]
	if !ok {
		r.say("我现在不能算术（没有 calculate 工具）。", "I can't do arithmetic right now (there is no calculate tool).")
		return nil
	}
	if len(expr) < minLength(d, "expression") || fitString(d, "expression", expr) != expr {
		r.say("这个算式的长度超出了计算工具的限制。", "That expression is longer than the calculate tool accepts.")
		return nil
	}
	res, failure, err := r.call(localtools.ToolCalculate, map[string]any{"expression": expr})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("计算 "+expr, "calculate "+expr, failure)
		return nil
	}
	if d, ok := integerField(res, "result"); ok {
		r.say(fmt.Sprintf("%s 等于 %s。", expr, d), fmt.Sprintf("%s = %s.", expr, d))
		return nil
	}
	v, ok := numberField(res, "result")
	if !ok {
		var n float64
		if json.Unmarshal(res, &n) != nil {
			r.say("计算工具回答了："+clip(string(res), 200)+"。", "The calculate tool answered: "+clip(string(res), 200)+".")
			return nil
		}
		v = n
	}
	r.say(fmt.Sprintf("%s 等于 %s。", expr, formatResult(v)), fmt.Sprintf("%s = %s.", expr, formatResult(v)))
	return nil
}

// maxSaidDigits bounds the digits of an integer result said in full; a longer one is said
// as 10 significant digits and an exponent.
const maxSaidDigits = 40

// integerField reads an integer JSON number field with all its digits, as calculate answers
// 2^64: 18446744073709551616, which float64 would round.
func integerField(res json.RawMessage, name string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(res, &obj) != nil {
		return "", false
	}
	d := string(bytes.TrimSpace(obj[name]))
	digits := strings.TrimPrefix(d, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	if len(digits) > maxSaidDigits {
		sig := strings.TrimRight(digits[1:10], "0")
		if sig != "" {
			sig = "." + sig
		}
		return d[:len(d)-len(digits)] + digits[:1] + sig + "e+" + strconv.Itoa(len(digits)-1), true
	}
	return d, true
}

// formatResult writes a result with at most 10 significant digits: 1/3 is 0.3333333333.
func formatResult(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}
