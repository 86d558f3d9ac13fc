package builtin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/devicectl/devicectl/hal/haltest"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// BenchmarkAmplifyVolume measures what the device spends on one execute
// besides the wire: validate the input, decode it, drive a (fake) speaker.
func BenchmarkAmplifyVolume(b *testing.B) {
	r := tools.NewRegistry()
	if err := builtin.Register(r, &builtin.Options{Speaker: &benchSpeaker{}}); err != nil {
		b.Fatal(err)
	}
	input := json.RawMessage(`{"level":80}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tool, err := r.Validate("amplify_volume", input)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tool.Invoke(ctx, input); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSpeaker is haltest.Speaker without the call log, which would grow
// with b.N and dominate the measurement.
type benchSpeaker struct {
	haltest.Speaker
	level int
}

func (s *benchSpeaker) SetVolume(ctx context.Context, percent int) error {
	s.level = percent
	return nil
}

func (s *benchSpeaker) Volume(ctx context.Context) (int, error) { return s.level, nil }
