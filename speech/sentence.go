package speech

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitter accumulates streamed text and cuts complete sentences off its front.
//
// A sentence ends at a newline; right after a run of the full-width terminators 。！？; and after
// a run of . ! ? only when white space follows, so "3.14", "v1.2" and "a.m." mid-word stay whole.
// Closing quotes and brackets after a terminator belong to its sentence. Whether white space
// follows an ASCII run that ends the text so far is not known until more text (or the final)
// arrives, so that sentence waits.
type splitter struct {
	buf  []byte
	scan int // no sentence ends before buf[scan]: resume there, so a long sentence is scanned once
}

func (s *splitter) write(text string) { s.buf = append(s.buf, text...) }

func (s *splitter) reset() {
	s.buf = s.buf[:0]
	s.scan = 0
}

// cut returns the complete sentences in the buffer, trimmed, leaving the rest buffered. With
// final the rest is the last sentence and the buffer is emptied. Sentences with nothing to
// pronounce (no letter or digit) are left out.
func (s *splitter) cut(final bool) []string {
	var out []string
	b := s.buf
	start, i := 0, s.scan
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == '\n' {
			out = appendSentence(out, b[start:i])
			i += n
			start = i
			continue
		}
		if !isTerminator(r) {
			i += n
			continue
		}
		j, wide := i, false
		for j < len(b) {
			r, n := utf8.DecodeRune(b[j:])
			if isTerminator(r) {
				wide = wide || r >= utf8.RuneSelf
			} else if !isCloser(r) {
				break
			}
			j += n
		}
		if !wide {
			if j == len(b) {
				if !final {
					break // wait for what follows
				}
			} else if r, _ := utf8.DecodeRune(b[j:]); !unicode.IsSpace(r) {
				i = j
				continue
			}
		}
		out = appendSentence(out, b[start:j])
		start, i = j, j
	}
	if final {
		out = appendSentence(out, b[start:])
		s.reset()
		return out
	}
	s.buf = b[:copy(b, b[start:])]
	s.scan = heldFrom(s.buf)
	return out
}

// heldFrom returns where the trailing run of terminators and closers in b starts: the only part
// of the rest whose verdict depends on text not yet seen.
func heldFrom(b []byte) int {
	end := len(b)
	for end > 0 {
		r, n := utf8.DecodeLastRune(b[:end])
		if !isTerminator(r) && !isCloser(r) {
			break
		}
		end -= n
	}
	return end
}

func appendSentence(out []string, b []byte) []string {
	if t := strings.TrimSpace(string(b)); speakable(t) {
		out = append(out, t)
	}
	return out
}

// speakable reports whether a synthesizer would say anything for s; a lone "..." or "？" would
// start a process for silence.
func speakable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '”', '’', '」', '』', '）', '】', '》':
		return true
	}
	return false
}
