package reminders

import (
	"context"
	"strconv"
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
			cpu0 := storetest.CPU(b)
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
			b.ReportMetric(float64(storetest.CPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
