package haltest_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/haltest"
)

var errBus = errors.New("i2c: bus error")

func TestSpeaker(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	tests := []struct {
		name      string
		spk       *haltest.Speaker
		run       func(s *haltest.Speaker) error
		wantErr   error
		wantLevel int
		wantCalls []string
	}{
		{
			name:      "set then read back",
			spk:       &haltest.Speaker{Level: 50},
			run:       func(s *haltest.Speaker) error { return setRead(ctx, s, 80, 80) },
			wantLevel: 80,
			wantCalls: []string{"SetVolume(80)", "Volume()"},
		},
		{
			name: "read back through ReadBack",
			spk:  &haltest.Speaker{ReadBack: func(l int) int { return l - l%3 }},
			run:  func(s *haltest.Speaker) error { return setRead(ctx, s, 80, 78) },
			// Level holds what was set; only the read back is rounded.
			wantLevel: 80,
			wantCalls: []string{"SetVolume(80)", "Volume()"},
		},
		{
			name:      "out of range",
			spk:       &haltest.Speaker{Level: 50},
			run:       func(s *haltest.Speaker) error { return s.SetVolume(ctx, 101) },
			wantErr:   hal.ErrOutOfRange,
			wantLevel: 50,
			wantCalls: []string{"SetVolume(101)"},
		},
		{
			name:      "injected set error",
			spk:       &haltest.Speaker{Level: 50, SetVolumeErr: errBus},
			run:       func(s *haltest.Speaker) error { return s.SetVolume(ctx, 10) },
			wantErr:   errBus,
			wantLevel: 50,
			wantCalls: []string{"SetVolume(10)"},
		},
		{
			name: "injected read error",
			spk:  &haltest.Speaker{Level: 50, VolumeErr: errBus},
			run: func(s *haltest.Speaker) error {
				_, err := s.Volume(ctx)
				return err
			},
			wantErr:   errBus,
			wantLevel: 50,
			wantCalls: []string{"Volume()"},
		},
		{
			name:      "cancelled context",
			spk:       &haltest.Speaker{Level: 50},
			run:       func(s *haltest.Speaker) error { return s.SetVolume(cancelled, 10) },
			wantErr:   context.Canceled,
			wantLevel: 50,
			wantCalls: []string{"SetVolume(10)"},
		},
		{
			name:      "halt mutes",
			spk:       &haltest.Speaker{Level: 50},
			run:       func(s *haltest.Speaker) error { return s.Halt() },
			wantLevel: 0,
			wantCalls: []string{"Halt()"},
		},
		{
			name:      "injected halt error",
			spk:       &haltest.Speaker{Level: 50, HaltErr: errBus},
			run:       func(s *haltest.Speaker) error { return s.Halt() },
			wantErr:   errBus,
			wantLevel: 50,
			wantCalls: []string{"Halt()"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(tt.spk)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if got := tt.spk.Current(); got != tt.wantLevel {
				t.Errorf("Current() = %d, want %d", got, tt.wantLevel)
			}
			if got := tt.spk.Calls(); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("Calls() = %q, want %q", got, tt.wantCalls)
			}
		})
	}
}

func setRead(ctx context.Context, s *haltest.Speaker, set, want int) error {
	if err := s.SetVolume(ctx, set); err != nil {
		return err
	}
	got, err := s.Volume(ctx)
	if err != nil {
		return err
	}
	if got != want {
		return errors.New("read back the wrong level")
	}
	return nil
}

func TestFace(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	tests := []struct {
		name      string
		face      *haltest.Face
		run       func(f *haltest.Face) error
		wantErr   error
		want      hal.Expression
		wantCalls []string
	}{
		{
			name: "zero value reads idle",
			face: &haltest.Face{},
			run: func(f *haltest.Face) error {
				if e, err := f.Expression(ctx); err != nil || e != hal.Idle {
					return errors.New("zero Face does not read idle")
				}
				return nil
			},
			want:      hal.Idle,
			wantCalls: []string{"Expression()"},
		},
		{
			name:      "set",
			face:      &haltest.Face{},
			run:       func(f *haltest.Face) error { return f.SetExpression(ctx, hal.Cry) },
			want:      hal.Cry,
			wantCalls: []string{"SetExpression(cry)"},
		},
		{
			name:      "unknown",
			face:      &haltest.Face{Shown: hal.Smile},
			run:       func(f *haltest.Face) error { return f.SetExpression(ctx, "grin") },
			wantErr:   hal.ErrUnknownExpression,
			want:      hal.Smile,
			wantCalls: []string{"SetExpression(grin)"},
		},
		{
			name:      "injected set error",
			face:      &haltest.Face{Shown: hal.Smile, SetExpressionErr: errBus},
			run:       func(f *haltest.Face) error { return f.SetExpression(ctx, hal.Cry) },
			wantErr:   errBus,
			want:      hal.Smile,
			wantCalls: []string{"SetExpression(cry)"},
		},
		{
			name: "injected read error",
			face: &haltest.Face{ExpressionErr: errBus},
			run: func(f *haltest.Face) error {
				_, err := f.Expression(ctx)
				return err
			},
			wantErr:   errBus,
			want:      hal.Idle,
			wantCalls: []string{"Expression()"},
		},
		{
			name:      "cancelled context",
			face:      &haltest.Face{},
			run:       func(f *haltest.Face) error { return f.SetExpression(cancelled, hal.Amazed) },
			wantErr:   context.Canceled,
			want:      hal.Idle,
			wantCalls: []string{"SetExpression(amazed)"},
		},
		{
			name:      "halt goes idle",
			face:      &haltest.Face{Shown: hal.Cry},
			run:       func(f *haltest.Face) error { return f.Halt() },
			want:      hal.Idle,
			wantCalls: []string{"Halt()"},
		},
		{
			name:      "injected halt error",
			face:      &haltest.Face{Shown: hal.Cry, HaltErr: errBus},
			run:       func(f *haltest.Face) error { return f.Halt() },
			wantErr:   errBus,
			want:      hal.Cry,
			wantCalls: []string{"Halt()"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(tt.face)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if got := tt.face.Current(); got != tt.want {
				t.Errorf("Current() = %q, want %q", got, tt.want)
			}
			if got := tt.face.Calls(); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("Calls() = %q, want %q", got, tt.wantCalls)
			}
		})
	}
}

func TestNames(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{(&haltest.Speaker{}).String(), "haltest-speaker"},
		{(&haltest.Speaker{Name: "amp"}).String(), "amp"},
		{(&haltest.Face{}).String(), "haltest-face"},
		{(&haltest.Face{Name: "oled"}).String(), "oled"},
	} {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}

func TestCallsIsACopy(t *testing.T) {
	s := &haltest.Speaker{}
	_ = s.Halt()
	s.Calls()[0] = "mangled"
	if got := s.Calls(); got[0] != "Halt()" {
		t.Errorf("Calls() shares its backing array: %q", got)
	}
}

// TestConcurrent is for -race: the fakes are used from tool goroutines.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	s := &haltest.Speaker{}
	f := &haltest.Face{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_ = s.SetVolume(ctx, i)
			_, _ = s.Volume(ctx)
			_ = f.SetExpression(ctx, hal.Smile)
			_, _ = f.Expression(ctx)
		})
	}
	wg.Wait()
	if n := len(s.Calls()); n != 40 {
		t.Errorf("speaker recorded %d calls, want 40", n)
	}
	if n := len(f.Calls()); n != 40 {
		t.Errorf("face recorded %d calls, want 40", n)
	}
}
