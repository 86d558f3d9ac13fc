package store

import (
	"strconv"
	"strings"
)

// rebind rewrites SQLite's '?' placeholders to PostgreSQL's $1, $2, ... in order. A '?' inside a
// string ('...', E'...', $tag$...$tag$), a quoted identifier ("...") or a comment (-- and /* */,
// which nest in PostgreSQL) is left alone. A query without '?' comes back as it was. SQLite's
// numbered ?NNN keeps its number, and a bare '?' after it takes the next one, as SQLite counts.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if k, err := strconv.Atoi(q[i+1 : j]); err == nil && j > i+1 {
				// Writing a bare '?' as $n followed by the digits would read as another number.
				n = max(n, k)
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(k))
			} else {
				n++
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
			}
			i = j
			continue
		case c == '\'':
			backslash := i > 0 && (q[i-1] == 'E' || q[i-1] == 'e') && (i < 2 || !isIdentByte(q[i-2]))
			i = skipQuoted(&b, q, i, '\'', backslash)
			continue
		case c == '"':
			i = skipQuoted(&b, q, i, '"', false)
			continue
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				end = len(q) - i
			}
			b.WriteString(q[i : i+end])
			i += end
			continue
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := blockCommentEnd(q, i)
			b.WriteString(q[i:end])
			i = end
			continue
		case c == '$' && (i == 0 || !isIdentByte(q[i-1])):
			if end, ok := dollarQuoteEnd(q, i); ok {
				b.WriteString(q[i:end])
				i = end
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// skipQuoted copies the string or identifier starting at q[i] (the quote) to b and returns the
// index past its closing quote; a doubled quote is one quote inside it, and so is one after a
// backslash when backslash is set (E'...').
func skipQuoted(b *strings.Builder, q string, i int, quote byte, backslash bool) int {
	j := i + 1
	for j < len(q) {
		switch {
		case backslash && q[j] == '\\' && j+1 < len(q):
			j += 2
			continue
		case q[j] == quote && j+1 < len(q) && q[j+1] == quote:
			j += 2
			continue
		case q[j] == quote:
			j++
			b.WriteString(q[i:j])
			return j
		}
		j++
	}
	b.WriteString(q[i:])
	return len(q)
}

// blockCommentEnd is the index past the /* */ comment starting at q[i], counting nested ones.
func blockCommentEnd(q string, i int) int {
	depth := 0
	for j := i; j+1 < len(q); {
		switch {
		case q[j] == '/' && q[j+1] == '*':
			depth++
			j += 2
		case q[j] == '*' && q[j+1] == '/':
			depth--
			j += 2
			if depth == 0 {
				return j
			}
		default:
			j++
		}
	}
	return len(q)
}

// dollarQuoteEnd returns the index past the dollar-quoted string starting at q[i] ($$...$$ or
// $tag$...$tag$), and false when q[i] starts none ($1 is a parameter).
func dollarQuoteEnd(q string, i int) (int, bool) {
	j := i + 1
	for j < len(q) && q[j] != '$' {
		if !isIdentByte(q[j]) || (j == i+1 && q[j] >= '0' && q[j] <= '9') {
			return 0, false
		}
		j++
	}
	if j >= len(q) {
		return 0, false
	}
	tag := q[i : j+1]
	end := strings.Index(q[j+1:], tag)
	if end < 0 {
		return len(q), true
	}
	return j + 1 + end + len(tag), true
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
