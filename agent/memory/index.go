package memory

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The postings of a search's terms are read from memory in the common case.
// Reading them from SQLite costs about a microsecond a row, and a common
// term (用户) has a posting in most of a user's memories: 7 ms a search at
// 10,000 memories. So the Store keeps, for recently searched users, the
// postings of the terms searched so far in a userIndex; a term is read from
// the database the first time a search needs it.
//
// The database stays the truth: memory_users.version counts each user's
// changes and every search reads it. A cached index at an older version is
// thrown away, so changes made by another process are seen. This Store's own
// writes update the cached terms in place and advance the version.

// maxCachedPostings bounds the postings kept in memory, over all users
// (about 24 bytes each, plus the terms). The least recently searched users
// go first; the user being searched is always kept.
const maxCachedPostings = 2 << 20

// entry is one memory's occurrence of a term.
type entry struct {
	seq                       int64
	tfContent, tfTopic, docLn int32
}

// userIndex is part of a user's postings as of version.
type userIndex struct {
	// mu guards everything below. Searches read under RLock; loads and the
	// Store's writes, which hold Store.mu, change it under Lock.
	mu       sync.RWMutex
	version  int64
	n, total int64 // memories and their summed lengths
	// postings holds the terms loaded so far, each list in increasing seq.
	// A term with no postings is present with a nil list.
	postings map[string][]entry
	size     int

	lastUsed uint64 // guarded by Store.cacheMu
}

// has reports whether every term is loaded.
func (idx *userIndex) has(terms []string) bool {
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	for _, t := range terms {
		if _, ok := idx.postings[t]; !ok {
			return false
		}
	}
	return true
}

// index returns the user's index, at version or newer, with terms loaded.
func (s *Store) index(ctx context.Context, uid, version int64, terms []string) (*userIndex, error) {
	if idx := s.cached(uid, version); idx != nil && idx.has(terms) {
		return idx, nil
	}
	// Loading under the write lock keeps it from racing this process's
	// writes, which update a cached index in place.
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// One read transaction: the version and the postings read agree even
	// while another process writes.
	fresh := &userIndex{postings: map[string][]entry{}}
	err = tx.QueryRowContext(ctx, `SELECT memories, total_len, version FROM memory_users WHERE uid = ?`, uid).
		Scan(&fresh.n, &fresh.total, &fresh.version)
	if err != nil {
		return nil, fmt.Errorf("loading index: %w", err)
	}
	idx := s.cached(uid, fresh.version)
	if idx == nil || idx.version != fresh.version {
		idx = fresh
		s.install(uid, idx)
	}
	idx.mu.RLock()
	var missing []string
	for _, t := range terms {
		if _, ok := idx.postings[t]; !ok {
			missing = append(missing, t)
		}
	}
	idx.mu.RUnlock()
	if len(missing) == 0 {
		return idx, nil
	}
	loaded, err := loadTerms(ctx, tx, uid, missing)
	if err != nil {
		return nil, fmt.Errorf("loading index: %w", err)
	}
	added := 0
	idx.mu.Lock()
	for _, t := range missing {
		idx.postings[t] = loaded[t]
		added += len(loaded[t])
	}
	idx.size += added
	idx.mu.Unlock()
	s.grew(uid, added)
	return idx, nil
}

// loadTerms reads uid's postings of terms.
func loadTerms(ctx context.Context, tx *sql.Tx, uid int64, terms []string) (map[string][]entry, error) {
	q := `SELECT term, seq, tf_content, tf_topic, doc_len FROM memory_terms WHERE uid = ? AND term IN (` +
		strings.Repeat("?,", len(terms)-1) + `?) ORDER BY term, seq`
	args := make([]any, 0, 1+len(terms))
	args = append(args, uid)
	for _, t := range terms {
		args = append(args, t)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string][]entry, len(terms))
	var term string
	for rows.Next() {
		var e entry
		if err := rows.Scan(&term, &e.seq, &e.tfContent, &e.tfTopic, &e.docLn); err != nil {
			return nil, err
		}
		out[term] = append(out[term], e)
	}
	return out, rows.Err()
}

// cached returns the cached index of uid if it is at version or newer (this
// Store wrote since the caller read version).
func (s *Store) cached(uid, version int64) *userIndex {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	idx := s.cache[uid]
	if idx == nil {
		return nil
	}
	idx.mu.RLock()
	current := idx.version >= version
	idx.mu.RUnlock()
	if !current {
		return nil
	}
	s.tick++
	idx.lastUsed = s.tick
	return idx
}

// install caches idx for uid in place of any older one.
func (s *Store) install(uid int64, idx *userIndex) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if old := s.cache[uid]; old != nil {
		s.cacheSize -= old.size
	}
	s.tick++
	idx.lastUsed = s.tick
	s.cache[uid] = idx
	s.cacheSize += idx.size
	s.evict(uid)
}

// grew accounts for postings added to uid's cached index.
func (s *Store) grew(uid int64, added int) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.cache[uid] == nil {
		return // evicted meanwhile; its size went with it
	}
	s.cacheSize += added
	s.evict(uid)
}

// evict drops the least recently used users other than keep while the cache
// is over its bound. The caller holds cacheMu.
func (s *Store) evict(keep int64) {
	for s.cacheSize > s.maxCached && len(s.cache) > 1 {
		var victim int64
		var oldest *userIndex
		for u, x := range s.cache {
			if u != keep && (oldest == nil || x.lastUsed < oldest.lastUsed) {
				victim, oldest = u, x
			}
		}
		s.cacheSize -= oldest.size
		delete(s.cache, victim)
	}
}

// change is one committed write of the Store, for the cached index.
type change struct {
	uid     int64
	version int64 // after the write
	seq     int64
	docLen  int
	added   bool
	content map[string]int // added: the memory's term counts
	topics  map[string]int
	terms   []string // deleted: the memory's terms
}

// apply brings a cached index up to date with a write this Store committed.
// The caller holds s.mu. An index that missed a change (another process
// wrote in between) is dropped, to be loaded again.
func (s *Store) apply(c change) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	idx := s.cache[c.uid]
	if idx == nil {
		return
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.version != c.version-1 {
		delete(s.cache, c.uid)
		s.cacheSize -= idx.size
		return
	}
	before := idx.size
	if c.added {
		inOrder := true
		add := func(term string) {
			list, loaded := idx.postings[term]
			if !loaded {
				return // read from the database, with this memory, when a search needs it
			}
			e := entry{seq: c.seq, tfContent: int32(c.content[term]), tfTopic: int32(c.topics[term]), docLn: int32(c.docLen)}
			if len(list) > 0 && list[len(list)-1].seq >= c.seq {
				inOrder = false // cannot happen with AUTOINCREMENT; never risk a wrong merge
			}
			idx.postings[term] = append(list, e)
			idx.size++
		}
		for term := range c.content {
			add(term)
		}
		for term := range c.topics {
			if _, ok := c.content[term]; !ok {
				add(term)
			}
		}
		idx.n++
		idx.total += int64(c.docLen)
		if !inOrder {
			delete(s.cache, c.uid)
			s.cacheSize -= before
			return
		}
	} else {
		for _, term := range c.terms {
			list, loaded := idx.postings[term]
			if !loaded {
				continue
			}
			for i, e := range list {
				if e.seq == c.seq {
					list = slices.Delete(list, i, i+1)
					idx.size--
					break
				}
			}
			idx.postings[term] = list // loaded, even when now empty
		}
		idx.n--
		idx.total -= int64(c.docLen)
	}
	idx.version = c.version
	s.cacheSize += idx.size - before
}
