package swarm

import (
	"math"
	"testing"
	"time"
)

func TestLatencyHist(t *testing.T) {
	// Every bucket's middle lies in the bucket, and buckets grow with the duration.
	for _, d := range []time.Duration{0, 1, 15, 16, 17, 31, 32, 33, 1000, 123456, time.Second, time.Hour, math.MaxInt64} {
		i := histBucket(d)
		if i < 0 || i >= histBuckets || histBucket(histMid(i)) != i {
			t.Errorf("%d: bucket %d, whose middle %d is in bucket %d", d, i, histMid(i), histBucket(histMid(i)))
		}
		if d > 0 && histBucket(d-1) > i {
			t.Errorf("bucket of %d > bucket of %d", d-1, d)
		}
	}
	var h latencyHist
	for i := 1; i <= 10000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	var c histCounts
	h.snapshot(&c)
	m := time.Duration(h.max.Load())
	if c.total() != 10000 || m != 10*time.Millisecond {
		t.Fatalf("total %d, max %s", c.total(), m)
	}
	for _, q := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.99, 9900 * time.Microsecond}, {1, 10 * time.Millisecond}} {
		got := c.quantile(q.q, m)
		if rel := math.Abs(float64(got-q.want)) / float64(q.want); rel > 1.0/32 {
			t.Errorf("p%g = %s, want %s within 3%%", q.q*100, got, q.want)
		}
	}
	h.add(time.Millisecond)
	var cur histCounts
	h.snapshot(&cur)
	if d := cur.minus(&c); d.total() != 1 || d.quantile(0.5, math.MaxInt64) < 968*time.Microsecond {
		t.Errorf("the interval after one more call: %d calls, p50 %s", d.total(), d.quantile(0.5, math.MaxInt64))
	}
	var none histCounts
	if none.quantile(0.5, m) != 0 {
		t.Error("the quantile of nothing is not 0")
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "0s",
		999:                     "999ns",
		95123:                   "95.1µs",
		1234567:                 "1.23ms",
		12*time.Second + 345678: "12s",
		90 * time.Minute:        "1h30m0s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%d) = %s, want %s", d, got, want)
		}
	}
}

// The quantiles of a few known durations: the q-quantile is the smallest duration with at least
// q of them at or below it, reported as its bucket's middle (within 1/32) and never above the max.
func TestQuantileKnown(t *testing.T) {
	var h latencyHist
	for range 9 {
		h.add(time.Millisecond)
	}
	h.add(100 * time.Millisecond)
	var c histCounts
	h.snapshot(&c)
	m := time.Duration(h.max.Load())
	for _, q := range []struct {
		q    float64
		want time.Duration
	}{{0, time.Millisecond}, {0.5, time.Millisecond}, {0.9, time.Millisecond}, {0.91, 100 * time.Millisecond}, {0.99, 100 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		got := c.quantile(q.q, m)
		if rel := math.Abs(float64(got-q.want)) / float64(q.want); rel > 1.0/32 || got > m {
			t.Errorf("p%g = %s, want %s", q.q*100, got, q.want)
		}
	}
}
