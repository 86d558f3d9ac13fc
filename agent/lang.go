package agent

import "unicode"

// Chinese reports whether s has a CJK character (Han, kana or Hangul): what answers it, or says
// it again, is then in Chinese, and anything else in English.
func Chinese(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}
