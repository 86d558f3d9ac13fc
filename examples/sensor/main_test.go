package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// TestDemo runs the demo as `go run ./examples/sensor -demo` does: a real agent dialling a real
// agenttest server over loopback WebSocket. It checks what the server received, from the
// program's own output.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"-demo"}, &stdout, &stderr); err != nil {
		t.Fatalf("run -demo: %v\nstderr:\n%s", err, &stderr)
	}
	if stderr.Len() > 0 {
		t.Logf("stderr:\n%s", &stderr)
	}
	_, rest, ok := strings.Cut(stdout.String(), "params as received:\n")
	if !ok {
		t.Fatalf("no registration in the output:\n%s", &stdout)
	}

	var reg struct {
		MAC   string `json:"mac_addr"`
		Tools []struct {
			Name       string          `json:"name"`
			MainType   string          `json:"main_type"`
			SubType    string          `json:"sub_type"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(strings.NewReader(rest)).Decode(&reg); err != nil {
		t.Fatalf("decoding the registration: %v\n%s", err, rest)
	}
	if reg.MAC != defaultMAC {
		t.Errorf("mac_addr = %q, want %q", reg.MAC, defaultMAC)
	}
	want := []struct{ name, mainType, subType, params string }{
		{"read_sensor", "remote", "query", `{"type":"object","properties":{
			"sensor":{"type":"string","description":"which sensor to read","enum":["temperature","humidity","light"]},
			"samples":{"type":"integer","description":"how many readings to average, taken at the device's sample rate","minimum":1,"maximum":10},
			"unit":{"type":"string","description":"unit of temperature readings (default celsius); ignored for other sensors","enum":["celsius","fahrenheit"]}},
			"required":["sensor","samples"],"additionalProperties":false}`},
		{"set_sample_rate", "remote", "control", `{"type":"object","properties":{
			"hz":{"type":"integer","description":"readings per second","minimum":1,"maximum":50}},
			"required":["hz"],"additionalProperties":false}`},
	}
	if len(reg.Tools) != len(want) {
		t.Fatalf("%d tools registered, want %d", len(reg.Tools), len(want))
	}
	for i, w := range want {
		got := reg.Tools[i]
		if got.Name != w.name || got.MainType != w.mainType || got.SubType != w.subType {
			t.Errorf("tool %d = %s %s/%s, want %s %s/%s", i, got.Name, got.MainType, got.SubType, w.name, w.mainType, w.subType)
		}
		if g, w := canonical(t, got.Parameters), canonical(t, []byte(w.params)); g != w {
			t.Errorf("%s parameters:\n got %s\nwant %s", got.Name, g, w)
		}
	}

	resps := responses(t, stdout.String())
	if len(resps) != len(demoCalls) {
		t.Fatalf("%d answers, want %d:\n%s", len(resps), len(demoCalls), &stdout)
	}

	// 1: a temperature read in fahrenheit; the values are real on a board with a thermal zone.
	var temp readResult
	decodeResult(t, resps[0], &temp)
	if temp.Sensor != "temperature" || temp.Unit != "fahrenheit" || temp.Source == "" || len(temp.Readings) != 3 {
		t.Errorf("temperature result = %+v, want 3 fahrenheit readings of temperature with a source", temp)
	}
	if mean := round2((temp.Readings[0] + temp.Readings[1] + temp.Readings[2]) / 3); temp.Value != mean {
		t.Errorf("temperature value = %v, want the mean of %v, %v", temp.Value, temp.Readings, mean)
	}
	if temp.Source == "simulated" && !reflect.DeepEqual(temp.Readings, []float64{72.5, 73.4, 71.6}) {
		t.Errorf("simulated readings = %v, want 22.5, 23 and 22 °C in °F", temp.Readings)
	}

	// 2: the control tool.
	var rate rateResult
	decodeResult(t, resps[1], &rate)
	if want := (rateResult{Status: "success", Hz: 20, PreviousHz: 10}); rate != want {
		t.Errorf("set_sample_rate result = %+v, want %+v", rate, want)
	}

	// 3: light is always simulated, so the whole result is known.
	var light readResult
	decodeResult(t, resps[2], &light)
	if want := (readResult{Sensor: "light", Value: 325, Unit: "lux", Readings: []float64{320, 330}, Source: "simulated"}); !reflect.DeepEqual(light, want) {
		t.Errorf("light result = %+v, want %+v", light, want)
	}

	// 4, 5: refused by the schema before the handler ran.
	for i, details := range map[int]string{
		3: "tool_input.samples: 50 is greater than the maximum 10",
		4: `tool_input.unit: "kelvin" is not one of celsius, fahrenheit`,
	} {
		e := resps[i].Error
		if e == nil || e.Code != -32602 || e.Message != "Invalid params" || e.Data.Details != details {
			t.Errorf("answer to %s %s = %+v, want -32602 Invalid params %q", demoCalls[i].tool, demoCalls[i].input, e, details)
		}
	}
}

type response struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Details string `json:"details"`
		} `json:"data"`
	} `json:"error"`
}

// responses decodes the "device: " lines of the demo's output.
func responses(t *testing.T, out string) []response {
	t.Helper()
	var rs []response
	for line := range strings.Lines(out) {
		if body, ok := strings.CutPrefix(line, "device: "); ok {
			var r response
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				t.Fatalf("answer %q: %v", body, err)
			}
			rs = append(rs, r)
		}
	}
	return rs
}

func decodeResult(t *testing.T, r response, v any) {
	t.Helper()
	if r.Error != nil || r.Result == nil {
		t.Fatalf("answer %s: error %+v, want a result", r.ID, r.Error)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Result))
	dec.DisallowUnknownFields() // the typed result, and nothing else
	if err := dec.Decode(v); err != nil {
		t.Fatalf("answer %s: result %s: %v", r.ID, r.Result, err)
	}
}

// canonical re-encodes JSON with sorted keys and no spaces, so that equal schemas compare equal.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// seq reads vals in turn, round and round.
func seq(vals ...float64) func() (float64, error) {
	i := 0
	return func() (float64, error) {
		v := vals[i%len(vals)]
		i++
		return v, nil
	}
}

// testSensors returns a board with known readings whose waits are recorded, not slept.
func testSensors(waits *[]time.Duration) *sensors {
	return &sensors{
		readers: map[string]reader{
			"temperature": {unit: "celsius", source: "test", read: seq(20, 21, 22)},
			"humidity":    {unit: "percent", source: "test", read: seq(40, 50)},
		},
		hz: 10,
		wait: func(_ context.Context, d time.Duration) error {
			*waits = append(*waits, d)
			return nil
		},
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		in        readInput
		want      readResult
		wantWaits int // 100 ms each, at 10 Hz
	}{
		{readInput{Sensor: "temperature", Samples: 3, Unit: "celsius"},
			readResult{"temperature", 21, "celsius", []float64{20, 21, 22}, "test"}, 2},
		{readInput{Sensor: "temperature", Samples: 3}, // unit left out: celsius
			readResult{"temperature", 21, "celsius", []float64{20, 21, 22}, "test"}, 2},
		{readInput{Sensor: "temperature", Samples: 3, Unit: "fahrenheit"},
			readResult{"temperature", 69.8, "fahrenheit", []float64{68, 69.8, 71.6}, "test"}, 2},
		{readInput{Sensor: "temperature", Samples: 2, Unit: "fahrenheit"},
			readResult{"temperature", 68.9, "fahrenheit", []float64{68, 69.8}, "test"}, 1},
		{readInput{Sensor: "temperature", Samples: 1},
			readResult{"temperature", 20, "celsius", []float64{20}, "test"}, 0},
		{readInput{Sensor: "humidity", Samples: 2, Unit: "fahrenheit"}, // unit applies to temperature only
			readResult{"humidity", 45, "percent", []float64{40, 50}, "test"}, 1},
	}
	for _, tc := range tests {
		var waits []time.Duration
		got, err := testSensors(&waits).read(t.Context(), tc.in)
		if err != nil {
			t.Errorf("read(%+v): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("read(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
		if want := repeat(100*time.Millisecond, tc.wantWaits); !reflect.DeepEqual(waits, want) {
			t.Errorf("read(%+v) waited %v, want %v", tc.in, waits, want)
		}
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	var out []time.Duration
	for range n {
		out = append(out, d)
	}
	return out
}

func TestSetRateSpacesSamples(t *testing.T) {
	var waits []time.Duration
	s := testSensors(&waits)
	got, err := s.setRate(t.Context(), rateInput{Hz: 20})
	if want := (rateResult{Status: "success", Hz: 20, PreviousHz: 10}); err != nil || got != want {
		t.Fatalf("setRate(20) = %+v, %v; want %+v", got, err, want)
	}
	if _, err := s.read(t.Context(), readInput{Sensor: "temperature", Samples: 3}); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}; !reflect.DeepEqual(waits, want) {
		t.Errorf("at 20 Hz read waited %v, want %v", waits, want)
	}
}

func TestReadFailures(t *testing.T) {
	broken := errors.New("i2c: no ACK")
	s := &sensors{
		readers: map[string]reader{"temperature": {unit: "celsius", read: func() (float64, error) { return 0, broken }}},
		hz:      1,
		wait:    sleep,
	}
	_, err := s.read(t.Context(), readInput{Sensor: "temperature", Samples: 1})
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "reading the temperature sensor") {
		t.Errorf("read from a failing sensor: %v, want it to wrap %v and name the sensor", err, broken)
	}

	// A call the agent gives up on (timeout, stop) must not sit out its one-second wait.
	s.readers["temperature"] = reader{unit: "celsius", read: seq(20)}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	_, err = s.read(ctx, readInput{Sensor: "temperature", Samples: 5})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 500*time.Millisecond {
		t.Errorf("read with a cancelled context: %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}

func TestThermalZone(t *testing.T) {
	sys := fstest.MapFS{
		"thermal_zone0/temp": {Data: []byte("")}, // some zones have no reading
		"thermal_zone0/type": {Data: []byte("acpitz\n")},
		"thermal_zone1/temp": {Data: []byte("45500\n")},
		"thermal_zone1/type": {Data: []byte("x86_pkg_temp\n")},
	}
	z, ok := thermalZone(sys)
	if !ok {
		t.Fatal("no thermal zone found")
	}
	if z.source != "thermal_zone1 (x86_pkg_temp)" || z.unit != "celsius" {
		t.Errorf("zone = %s in %s, want thermal_zone1 (x86_pkg_temp) in celsius", z.source, z.unit)
	}
	if v, err := z.read(); err != nil || v != 45.5 {
		t.Errorf("read() = %v, %v; want 45.5 (millidegrees to degrees)", v, err)
	}

	if s := newSensors(fstest.MapFS{}); s.readers["temperature"].source != "simulated" {
		t.Errorf("without thermal zones the temperature comes from %q, want simulated", s.readers["temperature"].source)
	}
}
