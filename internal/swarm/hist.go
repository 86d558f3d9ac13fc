package swarm

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// shortDuration rounds d to three significant digits: 95.1µs, 1.23ms.
func shortDuration(d time.Duration) string {
	unit := time.Duration(1)
	for d >= 1000*unit && unit < time.Second {
		unit *= 10
	}
	return d.Round(unit).String()
}

// The latency histogram has buckets a sixteenth of a power of two wide, so a quantile read from
// it is within about 3% of the true one, in 8 KiB however many calls there are; adding is
// lock-free, as calls finish on many goroutines at once.
const (
	histSubBits = 4
	histBuckets = 64 << histSubBits
)

// latencyHist counts call durations.
type latencyHist struct {
	counts [histBuckets]atomic.Uint64
	max    atomic.Int64 // nanoseconds
}

// histCounts is a copy of a latencyHist's counts.
type histCounts [histBuckets]uint64

// histBucket is the bucket of d: exact below 16ns, then 16 buckets per power of two.
func histBucket(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < 1<<histSubBits {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - histSubBits
	return (shift+1)<<histSubBits | int(v>>shift&(1<<histSubBits-1))
}

// histMid is the middle of bucket i, the value a quantile in it is reported as.
func histMid(i int) time.Duration {
	if i < 1<<histSubBits {
		return time.Duration(i)
	}
	shift := i>>histSubBits - 1
	lo := uint64(i&(1<<histSubBits-1)|1<<histSubBits) << shift
	return time.Duration(lo + (uint64(1)<<shift)/2)
}

func (h *latencyHist) add(d time.Duration) {
	for {
		old := h.max.Load()
		if int64(d) <= old || h.max.CompareAndSwap(old, int64(d)) {
			break
		}
	}
	h.counts[histBucket(d)].Add(1)
}

func (h *latencyHist) snapshot(dst *histCounts) {
	for i := range h.counts {
		dst[i] = h.counts[i].Load()
	}
}

func (c *histCounts) total() uint64 {
	var t uint64
	for _, v := range c {
		t += v
	}
	return t
}

// minus is the calls counted in c but not in prev, an earlier snapshot.
func (c *histCounts) minus(prev *histCounts) histCounts {
	var d histCounts
	for i := range c {
		d[i] = c[i] - prev[i]
	}
	return d
}

// quantile is the q-quantile of the counted durations, no more than limit (the true maximum, when
// known: a bucket's middle may lie above it).
func (c *histCounts) quantile(q float64, limit time.Duration) time.Duration {
	total := c.total()
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, v := range c {
		seen += v
		if seen >= max(rank, 1) {
			return min(histMid(i), limit)
		}
	}
	return limit
}
