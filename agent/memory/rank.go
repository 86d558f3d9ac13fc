package memory

import (
	"cmp"
	"math"
)

// Ranking. A memory's relevance to a query is the share of the query it
// covers, each part of the query weighted by how rare it is among the user's
// memories, and each match by how strongly the memory holds it:
//
//	relevance(d) = Σ_u w_u · cover_u(d) / Σ_u w_u
//
// over the units u of the query (Latin words, CJK characters):
//
//   - A unit is covered by the query terms that contain it (a character by
//     the one or two bigrams it is part of). cover_u(d) is the best strength
//     s_t(d) among those terms; 0 when d matches none of them.
//   - w_u is the smallest idf among those terms, so a character is as
//     informative as its most common word: idf(t) = ln(1 + (N+1)/(df_t+0.5)),
//     N the user's memories, df_t how many hold t (at least 1: a term no
//     memory holds, like a bigram straddling two words, tells no more than
//     one a single memory holds). Unlike BM25's own idf it never reaches 0,
//     so a term every memory holds still counts a little.
//   - s_t(d) is BM25F's term saturation, scaled so that a topic hit in a
//     memory of average length is exactly 1 and capped there:
//     s = min(1, sat(tf', dl) / sat(topicWeight, avgdl)), with
//     tf' = tf in content + topicWeight · tf in topics,
//     sat(tf, dl) = tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)).
//     A single content hit in a memory of average length gives about 0.73; a
//     longer memory gives less, a shorter more.
//
// Relevance is therefore in [0, 1]: 1 when every part of the query is a
// topic of the memory, 0 when nothing matches (those memories are not
// returned at all). Query words that appear in no memory (bigrams straddling
// two words, say) lower every memory's relevance alike and leave the order
// unchanged.
const (
	k1          = 1.2
	b           = 0.75
	topicWeight = 2 // a topic hit counts as two content hits
)

func idf(n, df int) float64 {
	df = max(df, 1)
	return math.Log(1 + float64(n+1)/(float64(df)+0.5))
}

// saturation is BM25's tf component for a weighted term frequency tf in a
// memory of weighted length dl.
func saturation(tf float64, dl, avgdl float64) float64 {
	if avgdl <= 0 {
		avgdl = 1
	}
	return tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avgdl))
}

// strength is s_t(d) above; full is saturation(topicWeight, avgdl, avgdl).
func strength(tfContent, tfTopic int, dl, avgdl, full float64) float64 {
	tf := float64(tfContent + topicWeight*tfTopic)
	if tf == 0 {
		return 0
	}
	return min(1, saturation(tf, dl, avgdl)/full)
}

// ranker scores the memories of one query.
type ranker struct {
	spans   []span
	units   int
	termIdx []int // spans[i].term's index among the unique terms
	weights []float64
	total   float64
}

// newRanker prepares the unit weights from the user's statistics: n
// memories and df[i], how many hold unique term i.
func newRanker(spans []span, units int, termIdx []int, n int, df []int) *ranker {
	r := &ranker{spans: spans, units: units, termIdx: termIdx, weights: make([]float64, units)}
	for u := range r.weights {
		r.weights[u] = math.Inf(1)
	}
	for i, s := range spans {
		w := idf(n, df[termIdx[i]])
		for u := s.first; u < s.first+s.n; u++ {
			r.weights[u] = min(r.weights[u], w)
		}
	}
	for u, w := range r.weights {
		if math.IsInf(w, 1) {
			r.weights[u] = 0 // past the terms Search looks up
		}
		r.total += r.weights[u]
	}
	return r
}

// relevance scores one memory from its term strengths (indexed by unique
// term, 0 for terms it does not hold). cover is scratch space of r.units.
func (r *ranker) relevance(strengths []float64, cover []float64) float64 {
	if r.total == 0 {
		return 0
	}
	clear(cover)
	for i, s := range r.spans {
		st := strengths[r.termIdx[i]]
		if st == 0 {
			continue
		}
		for u := s.first; u < s.first+s.n; u++ {
			cover[u] = max(cover[u], st)
		}
	}
	sum := 0.0
	for u, c := range cover {
		sum += r.weights[u] * c
	}
	return min(1, max(0, sum/r.total))
}

// scored is a memory's rank for one query.
type scored struct {
	seq       int64
	relevance float64
	raw       float64 // Σ idf·strength, to order equal relevances
}

// compareScored orders best first: by relevance, then raw score, then the
// newer memory.
func compareScored(a, b scored) int {
	if c := cmp.Compare(b.relevance, a.relevance); c != 0 {
		return c
	}
	if c := cmp.Compare(b.raw, a.raw); c != 0 {
		return c
	}
	return cmp.Compare(b.seq, a.seq)
}

// top returns the limit best memories of the index for a query: spans and
// units as queryTerms gave them, terms the unique terms, termIdx each span's
// index among them. It merges the terms' postings lists (each in seq order),
// so every matching memory is scored once, without a map.
func (idx *userIndex) top(spans []span, units int, termIdx []int, terms []string, limit int) []scored {
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	n := int(idx.n)
	if n <= 0 || limit <= 0 {
		return nil
	}
	avgdl := float64(idx.total) / float64(n)
	full := saturation(topicWeight, avgdl, avgdl)
	lists := make([][]entry, len(terms))
	df := make([]int, len(terms))
	idfs := make([]float64, len(terms))
	for i, t := range terms {
		lists[i] = idx.postings[t]
		df[i] = len(lists[i])
		idfs[i] = idf(n, df[i])
	}
	r := newRanker(spans, units, termIdx, n, df)
	pos := make([]int, len(terms))
	strengths := make([]float64, len(terms))
	cover := make([]float64, units)
	best := make([]scored, 0, limit+1)
	for {
		cur := int64(math.MaxInt64)
		for i, l := range lists {
			if pos[i] < len(l) && l[pos[i]].seq < cur {
				cur = l[pos[i]].seq
			}
		}
		if cur == math.MaxInt64 {
			return best
		}
		clear(strengths)
		raw := 0.0
		for i, l := range lists {
			if pos[i] < len(l) && l[pos[i]].seq == cur {
				e := l[pos[i]]
				st := strength(int(e.tfContent), int(e.tfTopic), float64(e.docLn), avgdl, full)
				strengths[i] = st
				raw += idfs[i] * st
				pos[i]++
			}
		}
		sc := scored{seq: cur, relevance: r.relevance(strengths, cover), raw: raw}
		if sc.relevance <= 0 || (len(best) == limit && compareScored(sc, best[limit-1]) >= 0) {
			continue
		}
		at := len(best)
		for at > 0 && compareScored(sc, best[at-1]) < 0 {
			at--
		}
		best = append(best, scored{})
		copy(best[at+1:], best[at:])
		best[at] = sc
		best = best[:min(len(best), limit)]
	}
}
