package mic

import "math"

// Level is the loudness of samples in dBFS: 0 for a full-scale square wave, about -3 for a
// full-scale sine, -96 for digital silence (never -Inf, so that levels compare and print).
func Level(samples []int16) float64 {
	if len(samples) == 0 {
		return silenceDB
	}
	var sum float64
	for _, s := range samples {
		v := float64(s)
		sum += v * v
	}
	rms := math.Sqrt(sum/float64(len(samples))) / 32768
	if rms <= 0 {
		return silenceDB
	}
	return max(20*math.Log10(rms), silenceDB)
}

// silenceDB is the floor Level reports: the quietest a 16-bit sample can be.
const silenceDB = -96.0
