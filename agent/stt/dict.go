package stt

import (
	"bufio"
	"bytes"
	"os"
	"sync"
)

// PocketSphinxDict is the pronunciation dictionary of Debian's pocketsphinx-en-us.
const PocketSphinxDict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

// Dictionary tells which words a recogniser's pronunciation dictionary (one word a line, then
// its phones) holds. It reads the file for a word it has not been asked about, and remembers.
type Dictionary struct {
	Path string

	mu   sync.Mutex
	seen map[string]bool
}

// maxSeen bounds what a Dictionary remembers; the words asked about are a device's enum values.
const maxSeen = 4096

// Has reports whether the dictionary holds word; a file that cannot be read holds none.
func (d *Dictionary) Has(word string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ok, seen := d.seen[word]; seen {
		return ok
	}
	if d.seen == nil || len(d.seen) >= maxSeen {
		d.seen = make(map[string]bool)
	}
	ok := d.scan(word)
	d.seen[word] = ok
	return ok
}

func (d *Dictionary) scan(word string) bool {
	f, err := os.Open(d.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	w := []byte(word)
	for s.Scan() {
		line := s.Bytes()
		if rest, ok := bytes.CutPrefix(line, w); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
			return true
		}
	}
	return false
}
