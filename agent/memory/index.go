package memory

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
)

// The postings of a search's terms are read from memory in the common case.
// Reading them from SQLite costs about a microsecond a row, and a common
// term (用户) has a posting in most of a user's memories: 7 ms a search at
// 10,000 memories. So the Store keeps recently searched users' postings in
// a userIndex. The database stays the truth: memory_users.version counts
// each user's changes, every search reads it (with the counts it reads
// anyway), and an index whose version differs is loaded again, so changes
// made by another process are seen. This Store's own writes update the
// index in place.

// maxCachedPostings bounds the postings kept in memory, over all users
// (about 24 bytes each, plus the terms). The least recently searched users
// go first; the user being searched is always kept.
const maxCachedPostings = 2 << 20

// entry is one memory's occurrence of a term.
type entry struct {
	seq                       int64
	tfContent, tfTopic, docLn int32
}

// userIndex is a user's postings as of version.
type userIndex struct {
	// mu guards everything below. Searches read under RLock; the Store's
	// writes, which hold Store.mu, update under Lock.
	mu       sync.RWMutex
	version  int64
	n, total int64              // memories and their summed lengths
	postings map[string][]entry // each list in increasing seq
	size     int

	lastUsed uint64 // guarded by Store.cacheMu
}

// index returns the user's index as of version, loading it when the cache
// has none or an older one.
func (s *Store) index(ctx context.Context, uid, version int64) (*userIndex, error) {
	if idx := s.cached(uid, version); idx != nil {
		return idx, nil
	}
	// Loading under the write lock keeps it from racing this process's
	// writes, which update a cached index in place.
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx := s.cached(uid, version); idx != nil {
		return idx, nil // loaded while we waited
	}
	idx, err := s.loadIndex(ctx, uid)
	if err != nil {
		return nil, err
	}
	s.install(uid, idx)
	return idx, nil
}

// cached returns the cached index of uid if it is at version.
func (s *Store) cached(uid, version int64) *userIndex {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	idx := s.cache[uid]
	if idx == nil {
		return nil
	}
	idx.mu.RLock()
	current := idx.version == version
	idx.mu.RUnlock()
	if !current {
		return nil
	}
	s.tick++
	idx.lastUsed = s.tick
	return idx
}

// loadIndex reads uid's postings in one read transaction, so that the
// version matches them even while another process writes.
func (s *Store) loadIndex(ctx context.Context, uid int64) (*userIndex, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	idx := &userIndex{postings: map[string][]entry{}}
	err = tx.QueryRowContext(ctx, `SELECT memories, total_len, version FROM memory_users WHERE uid = ?`, uid).
		Scan(&idx.n, &idx.total, &idx.version)
	if err != nil {
		return nil, fmt.Errorf("loading index: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT term, seq, tf_content, tf_topic, doc_len FROM memory_terms WHERE uid = ? ORDER BY term, seq`, uid)
	if err != nil {
		return nil, fmt.Errorf("loading index: %w", err)
	}
	defer rows.Close()
	var term string
	for rows.Next() {
		var e entry
		if err := rows.Scan(&term, &e.seq, &e.tfContent, &e.tfTopic, &e.docLn); err != nil {
			return nil, fmt.Errorf("loading index: %w", err)
		}
		idx.postings[term] = append(idx.postings[term], e)
		idx.size++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("loading index: %w", err)
	}
	return idx, nil
}

// install caches idx for uid and evicts the least recently used others
// while the cache is over its bound.
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
	for s.cacheSize > s.maxCached && len(s.cache) > 1 {
		var victim int64
		var oldest *userIndex
		for u, x := range s.cache {
			if u != uid && (oldest == nil || x.lastUsed < oldest.lastUsed) {
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
			e := entry{seq: c.seq, tfContent: int32(c.content[term]), tfTopic: int32(c.topics[term]), docLn: int32(c.docLen)}
			list := idx.postings[term]
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
			list := idx.postings[term]
			for i, e := range list {
				if e.seq == c.seq {
					list = slices.Delete(list, i, i+1)
					idx.size--
					break
				}
			}
			if len(list) == 0 {
				delete(idx.postings, term)
			} else {
				idx.postings[term] = list
			}
		}
		idx.n--
		idx.total -= int64(c.docLen)
	}
	idx.version = c.version
	s.cacheSize += idx.size - before
}
