package localtools

import "testing"

func BenchmarkCalculate(b *testing.B) {
	for _, expr := range []string{"add 5 and 10", "3*(4+5)-2^10/7", "三十加二十五乘以两", "square root of 144 plus 2 to the power of 8"} {
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Calculate(expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
