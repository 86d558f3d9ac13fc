package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's top, seen from this package's directory (where go test runs).
const repoRoot = "../.."

// The documents a user reads in a clone: their links must work there.
func docFiles(t *testing.T) []string {
	t.Helper()
	return append([]string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "RELIABILITY.md")}, docPages(t)...)
}

// docPages returns the manual's pages, docs/*.md.
func docPages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md: the protocol and the design's targets belong there")
	}
	return docs
}

var (
	fence      = regexp.MustCompile("(?ms)^ {0,3}```.*?^ {0,3}```[^\n]*$")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// stripCode blanks what Markdown shows as code, where brackets are not links.
func stripCode(s string) string {
	s = fence.ReplaceAllString(s, "")
	return codeSpan.ReplaceAllString(s, "``")
}

// links returns the targets of a document's inline and reference links.
func links(doc string) []string {
	doc = stripCode(doc)
	var out []string
	for _, re := range []*regexp.Regexp{inlineLink, refLink} {
		for _, m := range re.FindAllStringSubmatch(doc, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the heading anchors GitHub makes for a document: lower case, punctuation
// dropped, spaces as hyphens, repeats numbered -1, -2, ...
func anchors(doc string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.ReplaceAll(m[1], "`", "")) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link in the README and the docs names a file of the repository (not a
// document beside the clone, such as ../shared/PROTOCOL.md), and every #anchor a heading in it.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, mustAbs(t, file))
		for _, target := range links(string(data)) {
			if scheme.MatchString(target) {
				continue // a web address: not this test's to check
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := mustAbs(t, file)
			if path != "" {
				dest = filepath.Join(filepath.Dir(dest), filepath.FromSlash(path))
				rel, err := filepath.Rel(root, dest)
				if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					t.Errorf("%s: link %q points outside the repository", name, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file in the repository", name, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			doc, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", name, target, err)
				continue
			}
			if !anchors(string(doc))[anchor] {
				t.Errorf("%s: link %q: no heading makes the anchor #%s", name, target, anchor)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found: the link pattern is broken")
	}
}

// The README is the front door, not the manual: short enough to read through, and it leads to
// every page of docs/.
func TestDocREADMEFrontDoor(t *testing.T) {
	const maxLines = 300
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > maxLines {
		t.Errorf("README.md is %d lines, past %d: the manual belongs in docs/", n, maxLines)
	}
	linked := map[string]bool{}
	for _, target := range links(string(data)) {
		path, _, _ := strings.Cut(target, "#")
		linked[path] = true
	}
	for _, file := range docPages(t) {
		page := "docs/" + filepath.Base(file)
		if !linked[page] {
			t.Errorf("README.md does not link %s", page)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The link checker itself: what it must see and what it must not.
func TestDocLinksParse(t *testing.T) {
	doc := "See [the protocol](docs/protocol.md) and [targets](docs/design.md#targets \"title\").\n" +
		"A [split\nlink](RELIABILITY.md), `[code](not/a/link.md)`, [web](https://example.com).\n" +
		"```\n[fenced](not/either.md)\n```\n" +
		"[ref]: ../shared/PROTOCOL.md\n"
	got := strings.Join(links(doc), " ")
	want := "docs/protocol.md docs/design.md#targets RELIABILITY.md https://example.com ../shared/PROTOCOL.md"
	if got != want {
		t.Errorf("links = %q, want %q", got, want)
	}
	a := anchors("# The agent server (`devicectl serve`)\n## Targets\n## Targets\n```\n# not a heading\n```\n")
	for _, want := range []string{"the-agent-server-devicectl-serve", "targets", "targets-1"} {
		if !a[want] {
			t.Errorf("anchors lacks %q: %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block counted as a heading")
	}
}

// The board binary's size is stated twice, in docs/building.md and the Makefile's header: both say the
// same, within the 9 MiB budget CI holds the binary to. (CI measures the binary itself; this
// keeps the two texts from drifting apart, as they once did.)
func TestSizeFigures(t *testing.T) {
	figure := func(file, pattern string) int {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(pattern).FindStringSubmatch(string(data))
		if m == nil {
			t.Fatalf("%s states no armv6 size (%s)", file, pattern)
		}
		n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	doc := figure("docs/building.md", `stripped armv6 binary is ([0-9,]+)\s+bytes with `+"`BOARD_TAGS`")
	makefile := figure("Makefile", `armv6: ([0-9,]+) bytes`)
	if doc != makefile {
		t.Errorf("the armv6 board binary: docs/building.md says %d bytes, the Makefile %d", doc, makefile)
	}
	if doc > 9<<20 {
		t.Errorf("docs/building.md's armv6 board binary, %d bytes, is past the 9 MiB budget", doc)
	}
}
