package rules

import (
	"regexp"
	"strings"
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
