package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// zhRemindPatterns are the patterns parseRemindZh decides by, each of which must need one of
// zhRemindWords: the pre-check skips them when none is said. The patterns for the time and the
// digits they read (reZhTimer and reZhRemindVerb run on digitizeZh's output) only rewrite
// numbers, so a word found there was in what was said.
var zhRemindPatterns = map[string]*regexp.Regexp{
	"reZhCancel":     reZhCancel,
	"reZhList":       reZhList,
	"reZhTimer":      reZhTimer,
	"reZhRemindVerb": reZhRemindVerb,
}

// TestZhRemindWordsCoverPatterns fails when a Chinese reminder pattern can match a sentence that
// has none of zhRemindWords: such a sentence would never reach the pattern.
func TestZhRemindWordsCoverPatterns(t *testing.T) {
	for name, re := range zhRemindPatterns {
		if why := needsWord(re.String(), zhRemindWords); why != "" {
			t.Errorf("%s can match text with none of zhRemindWords %q: %s", name, zhRemindWords, why)
		}
	}
}

// TestZhRemindPatternsListed fails when parseRemindZh uses a pattern zhRemindPatterns does not
// list, so that a new one is checked too.
func TestZhRemindPatternsListed(t *testing.T) {
	regexps, used := map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for i, v := range vs.Values {
							if isMustCompile(v) {
								regexps[vs.Names[i].Name] = true
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Name.Name == "parseRemindZh" {
					ast.Inspect(d.Body, func(n ast.Node) bool {
						if id, ok := n.(*ast.Ident); ok {
							used[id.Name] = true
						}
						return true
					})
				}
			}
		}
	}
	if len(used) == 0 {
		t.Fatal("parseRemindZh not found")
	}
	for name := range used {
		if regexps[name] && zhRemindPatterns[name] == nil {
			t.Errorf("parseRemindZh uses %s: list it in zhRemindPatterns", name)
		}
	}
	for name := range zhRemindPatterns {
		if !used[name] {
			t.Errorf("zhRemindPatterns lists %s, which parseRemindZh does not use", name)
		}
	}
}

func isMustCompile(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "regexp" && sel.Sel.Name == "MustCompile"
}

// needsWord returns "" when every match of the pattern contains one of words, and otherwise
// a part of the pattern that can match without one. It is sound, not complete: a pattern it
// cannot prove is reported.
func needsWord(pattern string, words []string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return err.Error()
	}
	w := wordCheck{words: words}
	if !w.guarded(re.Simplify()) {
		return w.why
	}
	return ""
}

type wordCheck struct {
	words []string
	why   string // the first part found unguarded
}

// maxStrings bounds the strings a finite part of a pattern is expanded to.
const maxStrings = 1 << 14

// guarded reports whether every match of re contains one of the words.
func (w *wordCheck) guarded(re *syntax.Regexp) bool {
	if ss, ok := finite(re); ok {
		for _, s := range ss {
			if !slices.ContainsFunc(w.words, func(word string) bool { return strings.Contains(s, word) }) {
				w.fail(re, "it matches "+strconv.Quote(s))
				return false
			}
		}
		return true
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return w.guarded(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min >= 1 && w.guarded(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !w.guarded(sub) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		// A match contains a match of each part, and of each run of finite parts together
		// (a word may span two of them).
		probe := wordCheck{words: w.words}
		for i := 0; i < len(re.Sub); {
			if _, ok := finite(re.Sub[i]); !ok {
				if probe.guarded(re.Sub[i]) {
					return true
				}
				i++
				continue
			}
			j := i + 1
			for j < len(re.Sub) {
				if _, ok := finite(re.Sub[j]); !ok {
					break
				}
				j++
			}
			if i == 0 && j == len(re.Sub) {
				// Every part is finite but together too many: each part alone.
				if slices.ContainsFunc(re.Sub, probe.guarded) {
					return true
				}
			} else if probe.guarded(&syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[i:j]}) {
				return true
			}
			i = j
		}
		w.fail(re, "no part of it needs one (first: "+probe.why+")")
		return false
	}
	w.fail(re, "no bound on what it matches")
	return false
}

func (w *wordCheck) fail(re *syntax.Regexp, why string) {
	if w.why == "" {
		w.why = re.String() + ": " + why
	}
}

// finite returns every string re matches when they are few, ignoring anchors (they match no
// text); ok is false when there are too many or no bound.
func finite(re *syntax.Regexp) (ss []string, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return nil, true
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo >= maxStrings || len(ss)+int(hi-lo) >= maxStrings || hi > utf8.MaxRune {
				return nil, false
			}
			for r := lo; r <= hi; r++ {
				ss = append(ss, string(r))
			}
		}
		return ss, true
	case syntax.OpCapture:
		return finite(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := finite(re.Sub[0])
		return append([]string{""}, sub...), ok
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := finite(sub)
			if !ok || len(ss)+len(s) > maxStrings {
				return nil, false
			}
			ss = append(ss, s...)
		}
		return ss, true
	case syntax.OpConcat:
		ss = []string{""}
		for _, sub := range re.Sub {
			s, ok := finite(sub)
			if !ok || len(ss)*len(s) > maxStrings {
				return nil, false
			}
			var next []string
			for _, a := range ss {
				for _, b := range s {
					next = append(next, a+b)
				}
			}
			ss = next
		}
		return ss, true
	}
	return nil, false
}

// TestNeedsWord shows the check tells a pattern that needs a word from one that does not.
func TestNeedsWord(t *testing.T) {
	words := []string{"提醒", "叫我"}
	for _, tt := range []struct {
		pattern string
		ok      bool
	}{
		{`提醒`, true},
		{`(?:叫|喊)我`, false},    // 喊我
		{`^(.*)提醒(.*)$`, true}, // the word between two unbounded parts
		{`叫(?:我)?`, false},     // 叫
		{`(?:我的)?提醒列表|叫我.+`, true},
		{`(?:我的)?(?:所有)?(?:计划|安排)`, false},
		{`.*`, false},
		{`提?醒`, false},
		{`(?:提醒)+`, true},
		{`(?:提醒)*`, false},
		{`叫[我们]`, false},
		{`[a-z][a-z][a-z][a-z]提醒`, true}, // too many strings to list: part by part
	} {
		if why := needsWord(tt.pattern, words); (why == "") != tt.ok {
			t.Errorf("needsWord(%q) = %q, want ok %v", tt.pattern, why, tt.ok)
		}
	}
}
