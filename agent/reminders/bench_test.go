package reminders

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/store/storetest"
)

// BenchmarkTakeMissedNone is what every turn asks of the reminders: whether its device missed
// any, when it has not. Between two, a write (a task's, in serve) changes the database, as it
// does between two turns. cpu-ns/op is the process's CPU per turn, the write's included.
func BenchmarkTakeMissedNone(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d.String(), func(b *testing.B) {
			db := storetest.Open(b, storetest.Where(b, d))
			ctx := context.Background()
			st, err := OpenStore(ctx, db)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Write(ctx, `CREATE TABLE bench_writes (id TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for i := range b.N {
				if _, err := db.Write(ctx, `INSERT INTO bench_writes (id, v) VALUES (?, 'x')`, strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				m, err := st.TakeMissed(ctx, mac, time.UTC)
				if err != nil || len(m) != 0 {
					b.Fatalf("%v, %v", m, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU the process has used (user and system), on SQLite the database's included.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
