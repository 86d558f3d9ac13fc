package device_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/tools"
)

// callErr returns the *device.CallError of err, failing the test when err is something else.
func callErr(t *testing.T, err error) *device.CallError {
	t.Helper()
	var ce *device.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want a *device.CallError", err, err)
	}
	return ce
}

// A local call is validated, run and answered as the server's executes are: same result, same
// codes, same details.
func TestCallRunsLikeAnExecute(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, nil)
	speaker := sim.NewSpeaker(nil)
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: seedRegistry(t, speaker, sim.NewFace(nil))})
	runAgent(t, a)
	d := waitDevice(t, srv)

	for _, tc := range []struct{ tool, input string }{
		{"amplify_volume", `{"level":40}`},
		{"amplify_volume", `{"level":150}`},
		{"amplify_volume", `{}`},
		{"no_such_tool", `{}`},
		{"amplify_volume", `null`},
	} {
		want := execute(t, d, tc.tool, tc.input)
		got, err := a.Call(context.Background(), tc.tool, json.RawMessage(tc.input))
		switch {
		case want.Error == nil:
			if err != nil || string(got) != string(*want.Result) {
				t.Errorf("%s %s: local call = %s, %v; the server got %s", tc.tool, tc.input, got, err, *want.Result)
			}
		default:
			ce := callErr(t, err)
			var data device.ErrorData
			if want.Error.Data != nil {
				_ = json.Unmarshal(*want.Error.Data, &data)
			}
			if ce.Code != want.Error.Code || ce.Message != want.Error.Message || ce.Details != data.Details {
				t.Errorf("%s %s: local call = %+v; the server got %d %q %q", tc.tool, tc.input, ce, want.Error.Code, want.Error.Message, data.Details)
			}
		}
	}
	if v, _ := speaker.Volume(context.Background()); v != 40 {
		t.Errorf("speaker volume = %d, want 40", v)
	}
}

// Local calls and the server's share the in-flight bound and the hardware: a local call holding
// the only slot makes the server's call busy, and the part is never driven twice at once.
func TestCallSharesLimitsWithTheServer(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, nil)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	reg := tools.NewRegistry()
	if err := reg.Add(testTool(t, "hold", 0, []string{"arm"}, func(ctx context.Context, _ json.RawMessage) (any, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, device.Options{URL: srv.URL(), Registry: reg, MaxInFlight: 1})
	runAgent(t, a)
	d := waitDevice(t, srv)

	var wg sync.WaitGroup
	wg.Add(1)
	var got json.RawMessage
	var err error
	go func() {
		defer wg.Done()
		got, err = a.Call(context.Background(), "hold", json.RawMessage(`{}`))
	}()
	<-entered
	resp := execute(t, d, "hold", `{}`)
	if resp.Error == nil || resp.Error.Code != device.CodeBusy {
		t.Errorf("server's call while a local one holds the only slot = %s, want -32002", resultOrError(resp))
	}
	if _, lerr := a.Call(context.Background(), "hold", json.RawMessage(`{}`)); callErr(t, lerr).Code != device.CodeBusy {
		t.Errorf("second local call = %v, want -32002", lerr)
	}
	close(release)
	wg.Wait()
	if err != nil || string(got) != `"done"` {
		t.Errorf("local call = %s, %v; want \"done\"", got, err)
	}
}

// The OpenTool server on the device must work while the agent server is away: local calls are
// served while the agent backs off, and refused once Run has returned.
func TestCallWithoutTheLine(t *testing.T) {
	checkLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens: every dial is refused
	speaker := sim.NewSpeaker(nil)
	a := newAgent(t, device.Options{URL: url, Registry: seedRegistry(t, speaker, sim.NewFace(nil))})
	stop := runAgent(t, a)
	waitState(t, a, device.BackingOff)
	if got, err := a.Call(context.Background(), "amplify_volume", json.RawMessage(`{"level":7}`)); err != nil {
		t.Fatalf("local call while backing off = %s, %v; want a result", got, err)
	}
	if v, _ := speaker.Volume(context.Background()); v != 7 {
		t.Errorf("speaker volume = %d, want 7", v)
	}
	stop()
	_, err = a.Call(context.Background(), "amplify_volume", json.RawMessage(`{"level":8}`))
	if ce := callErr(t, err); ce.Code != device.CodeBusy || !strings.Contains(ce.Details, "shutting down") {
		t.Errorf("local call after Run returned = %+v, want -32002 shutting down", ce)
	}
}

// A local call is bounded by the tool's timeout, reported to OnCall as local, and a caller that
// gives up is told at once while the tool's context is cancelled.
func TestCallTimeoutAndCancel(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var reports []device.CallReport
	cancelled := make(chan struct{}, 1)
	reg := tools.NewRegistry()
	for _, tt := range []*tools.Tool{
		testTool(t, "slow", 50*time.Millisecond, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		testTool(t, "wait", time.Minute, nil, func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		}),
	} {
		if err := reg.Add(tt); err != nil {
			t.Fatal(err)
		}
	}
	a := newAgent(t, device.Options{URL: "ws://127.0.0.1:1/", Registry: reg, OnCall: func(r device.CallReport) {
		mu.Lock()
		reports = append(reports, r)
		mu.Unlock()
	}})

	_, err := a.Call(context.Background(), "slow", json.RawMessage(`{}`))
	if ce := callErr(t, err); ce.Code != device.CodeToolTimeout {
		t.Errorf("slow local call = %+v, want -32001", ce)
	}
	mu.Lock()
	if len(reports) != 1 || reports[0].Via != device.ViaLocal || reports[0].Code != device.CodeToolTimeout {
		t.Errorf("OnCall reports = %+v, want one local -32001", reports)
	}
	mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := a.Call(ctx, "wait", json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled local call = %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Error("the tool's context was not cancelled with the caller's")
	}
}
