package sim_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/sim"
)

func TestNewFaceInitialExpression(t *testing.T) {
	tests := []struct {
		name string
		opts *sim.FaceOptions
		want hal.Expression
	}{
		{"nil options", nil, hal.Idle},
		{"zero means idle", &sim.FaceOptions{}, hal.Idle},
		{"given", &sim.FaceOptions{Expression: hal.Cry}, hal.Cry},
		{"unknown means idle", &sim.FaceOptions{Expression: "grin"}, hal.Idle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before sim.FaceOptions
			if tt.opts != nil {
				before = *tt.opts
			}
			f := sim.NewFace(tt.opts)
			got, err := f.Expression(context.Background())
			if err != nil || got != tt.want {
				t.Errorf("Expression() = %q, %v; want %q, nil", got, err, tt.want)
			}
			if tt.opts != nil && tt.opts.Expression != before.Expression {
				t.Errorf("NewFace changed the caller's options: %q -> %q", before.Expression, tt.opts.Expression)
			}
		})
	}
}

func TestFaceSetExpression(t *testing.T) {
	type test struct {
		e          hal.Expression
		wantErr    error
		wantExpr   hal.Expression
		wantNotify []hal.Expression
	}
	var tests []test
	for _, e := range hal.Expressions() {
		tests = append(tests, test{e, nil, e, []hal.Expression{e}})
	}
	for _, e := range []hal.Expression{"", "Smile", "happy", "idle "} {
		tests = append(tests, test{e, hal.ErrUnknownExpression, hal.Smile, nil})
	}
	for _, tt := range tests {
		var rec recorder[hal.Expression]
		f := sim.NewFace(&sim.FaceOptions{Expression: hal.Smile, OnChange: rec.record})
		err := f.SetExpression(context.Background(), tt.e)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("SetExpression(%q) = %v, want %v", tt.e, err, tt.wantErr)
		}
		if got, _ := f.Expression(context.Background()); got != tt.wantExpr {
			t.Errorf("after SetExpression(%q): Expression() = %q, want %q", tt.e, got, tt.wantExpr)
		}
		if got := rec.calls(); !equal(got, tt.wantNotify) {
			t.Errorf("after SetExpression(%q): OnChange calls %q, want %q", tt.e, got, tt.wantNotify)
		}
	}
}

func TestFaceCancelledContext(t *testing.T) {
	var rec recorder[hal.Expression]
	f := sim.NewFace(&sim.FaceOptions{OnChange: rec.record})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.SetExpression(ctx, hal.Amazed); !errors.Is(err, context.Canceled) {
		t.Errorf("SetExpression(cancelled) = %v, want context.Canceled", err)
	}
	if _, err := f.Expression(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Expression(cancelled) = %v, want context.Canceled", err)
	}
	if got, _ := f.Expression(context.Background()); got != hal.Idle {
		t.Errorf("a cancelled SetExpression changed the face to %q", got)
	}
	if got := rec.calls(); len(got) != 0 {
		t.Errorf("a cancelled SetExpression notified %q", got)
	}
}

func TestFaceHalt(t *testing.T) {
	ctx := context.Background()
	var rec recorder[hal.Expression]
	f := sim.NewFace(&sim.FaceOptions{Expression: hal.Cry, OnChange: rec.record})
	if f.String() != "sim-face" {
		t.Errorf("String() = %q, want sim-face", f.String())
	}
	for range 2 {
		if err := f.Halt(); err != nil {
			t.Fatalf("Halt() = %v", err)
		}
		if got, _ := f.Expression(ctx); got != hal.Idle {
			t.Errorf("after Halt: Expression() = %q, want idle", got)
		}
	}
	if got := rec.calls(); !equal(got, []hal.Expression{hal.Idle}) {
		t.Errorf("OnChange calls after two Halts = %q, want [idle]", got)
	}
	if err := f.SetExpression(ctx, hal.Smile); err != nil {
		t.Fatalf("SetExpression after Halt = %v", err)
	}
	if got, _ := f.Expression(ctx); got != hal.Smile {
		t.Errorf("SetExpression after Halt: Expression() = %q, want smile", got)
	}
}

func TestFaceOnChangeMayRead(t *testing.T) {
	ctx := context.Background()
	var f *sim.Face
	var seen []hal.Expression
	f = sim.NewFace(&sim.FaceOptions{OnChange: func(hal.Expression) {
		e, err := f.Expression(ctx)
		if err != nil {
			t.Errorf("Expression() in OnChange: %v", err)
		}
		seen = append(seen, e)
	}})
	within(t, func() {
		_ = f.SetExpression(ctx, hal.Amazed)
		_ = f.Halt()
	})
	if want := []hal.Expression{hal.Amazed, hal.Idle}; !equal(seen, want) {
		t.Errorf("Expression() read inside OnChange = %q, want %q", seen, want)
	}
}

func TestFaceConcurrent(t *testing.T) {
	ctx := context.Background()
	var rec recorder[hal.Expression]
	f := sim.NewFace(&sim.FaceOptions{OnChange: rec.record})
	var wg sync.WaitGroup
	for i := range 60 {
		e := hal.Expressions()[i%6]
		wg.Go(func() {
			if err := f.SetExpression(ctx, e); err != nil {
				t.Errorf("SetExpression(%q) = %v", e, err)
			}
			if _, err := f.Expression(ctx); err != nil {
				t.Errorf("Expression() = %v", err)
			}
		})
	}
	wg.Go(func() { _ = f.Halt() })
	wg.Wait()
	calls := rec.calls()
	if len(calls) < 60 {
		t.Fatalf("%d OnChange calls, want at least 60", len(calls))
	}
	if got, _ := f.Expression(ctx); calls[len(calls)-1] != got {
		t.Errorf("last OnChange(%q) but Expression() = %q", calls[len(calls)-1], got)
	}
}
