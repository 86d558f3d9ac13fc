package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/haltest"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// call validates and invokes a tool the way the device does, and returns
// the result as JSON.
func call(t *testing.T, r *tools.Registry, name, input string) (string, error) {
	t.Helper()
	tool, err := r.Validate(name, json.RawMessage(input))
	if err != nil {
		t.Fatalf("Validate(%s, %s): %v", name, input, err)
	}
	res, err := tool.Invoke(context.Background(), json.RawMessage(input))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("%s result does not marshal: %v", name, err)
	}
	return string(b), nil
}

func register(t *testing.T, opts *builtin.Options) *tools.Registry {
	t.Helper()
	r := tools.NewRegistry()
	if err := builtin.Register(r, opts); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAmplifyVolume(t *testing.T) {
	hwErr := errors.New("amixer: exit status 1")
	tests := []struct {
		name      string
		lang      string
		spk       *haltest.Speaker
		input     string
		want      string // result JSON
		wantErr   string // or the error message
		wantCalls []string
	}{
		{name: "zh", spk: &haltest.Speaker{Level: 30}, input: `{"level":80}`,
			want:      `{"status":"success","message":"音量已成功设置为 80","level":80}`,
			wantCalls: []string{"SetVolume(80)", "Volume()"}},
		{name: "en", lang: "en", spk: &haltest.Speaker{Level: 30}, input: `{"level":0}`,
			want:      `{"status":"success","message":"Volume set to 0","level":0}`,
			wantCalls: []string{"SetVolume(0)", "Volume()"}},
		{name: "read back", spk: &haltest.Speaker{ReadBack: func(l int) int { return l - 1 }}, input: `{"level":80}`,
			want:      `{"status":"success","message":"音量已成功设置为 79","level":79}`,
			wantCalls: []string{"SetVolume(80)", "Volume()"}},
		{name: "integral float", spk: &haltest.Speaker{}, input: `{"level":100.0}`,
			want:      `{"status":"success","message":"音量已成功设置为 100","level":100}`,
			wantCalls: []string{"SetVolume(100)", "Volume()"}},
		{name: "set fails zh", spk: &haltest.Speaker{SetVolumeErr: hwErr}, input: `{"level":80}`,
			wantErr:   "执行失败：无法设置音量：amixer: exit status 1",
			wantCalls: []string{"SetVolume(80)"}},
		{name: "set fails en", lang: "en", spk: &haltest.Speaker{SetVolumeErr: hwErr}, input: `{"level":80}`,
			wantErr:   "Failed: cannot set the volume: amixer: exit status 1",
			wantCalls: []string{"SetVolume(80)"}},
		{name: "hardware refuses the level", spk: &haltest.Speaker{SetVolumeErr: hal.ErrOutOfRange}, input: `{"level":80}`,
			wantErr:   "执行失败：音量级别超出范围（0-100）。",
			wantCalls: []string{"SetVolume(80)"}},
		{name: "read back fails", spk: &haltest.Speaker{VolumeErr: hwErr}, input: `{"level":80}`,
			wantErr:   "执行失败：音量已设置，但无法读回：amixer: exit status 1",
			wantCalls: []string{"SetVolume(80)", "Volume()"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := register(t, &builtin.Options{Speaker: tt.spk, Language: tt.lang})
			got, err := call(t, r, "amplify_volume", tt.input)
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v, want %q", err, tt.wantErr)
				}
				if tt.spk.SetVolumeErr != nil && !errors.Is(err, tt.spk.SetVolumeErr) ||
					tt.spk.VolumeErr != nil && !errors.Is(err, tt.spk.VolumeErr) {
					t.Errorf("error %v does not wrap the hardware's error", err)
				}
			case err != nil:
				t.Errorf("error = %v, want %s", err, tt.want)
			case got != tt.want:
				t.Errorf("result\n got %s\nwant %s", got, tt.want)
			}
			if calls := tt.spk.Calls(); !slices.Equal(calls, tt.wantCalls) {
				t.Errorf("speaker calls = %q, want %q", calls, tt.wantCalls)
			}
		})
	}
}

func TestAmplifyVolumeRefusedBeforeHardware(t *testing.T) {
	spk := &haltest.Speaker{}
	r := register(t, &builtin.Options{Speaker: spk})
	for _, input := range []string{`{"level":150}`, `{"level":-1}`, `{"level":50.5}`, `{"level":"80"}`, `{}`, `{"volume":80}`} {
		var pe *tools.ParamsError
		if _, err := r.Validate("amplify_volume", json.RawMessage(input)); !errors.As(err, &pe) {
			t.Errorf("Validate(%s) = %v, want a *ParamsError", input, err)
		}
	}
	if calls := spk.Calls(); len(calls) != 0 {
		t.Errorf("speaker calls = %q, want none", calls)
	}
}

func TestSetExpression(t *testing.T) {
	hwErr := errors.New("i2c: no ack")
	tests := []struct {
		name      string
		lang      string
		face      *haltest.Face
		input     string
		want      string
		wantErr   string
		wantCalls []string
	}{
		{name: "zh", face: &haltest.Face{}, input: `{"expression":"smile"}`,
			want:      `{"status":"success","message":"表情已成功设置为 smile","expression":"smile"}`,
			wantCalls: []string{"SetExpression(smile)", "Expression()"}},
		{name: "en", lang: "en-US", face: &haltest.Face{}, input: `{"expression":"close_eyes_smile"}`,
			want:      `{"status":"success","message":"Expression set to close_eyes_smile","expression":"close_eyes_smile"}`,
			wantCalls: []string{"SetExpression(close_eyes_smile)", "Expression()"}},
		{name: "set fails", face: &haltest.Face{SetExpressionErr: hwErr}, input: `{"expression":"cry"}`,
			wantErr:   "执行失败：无法设置表情：i2c: no ack",
			wantCalls: []string{"SetExpression(cry)"}},
		{name: "set fails en", lang: "en", face: &haltest.Face{SetExpressionErr: hwErr}, input: `{"expression":"cry"}`,
			wantErr:   "Failed: cannot set the expression: i2c: no ack",
			wantCalls: []string{"SetExpression(cry)"}},
		{name: "face refuses", face: &haltest.Face{SetExpressionErr: hal.ErrUnknownExpression}, input: `{"expression":"amazed"}`,
			wantErr:   "执行失败：设备不支持表情 amazed。",
			wantCalls: []string{"SetExpression(amazed)"}},
		{name: "read back fails", face: &haltest.Face{ExpressionErr: hwErr}, input: `{"expression":"idle"}`,
			wantErr:   "执行失败：表情已设置，但无法读回：i2c: no ack",
			wantCalls: []string{"SetExpression(idle)", "Expression()"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := register(t, &builtin.Options{Face: tt.face, Language: tt.lang})
			got, err := call(t, r, "set_virtual_human_expression", tt.input)
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("error = %v, want %s", err, tt.want)
			case got != tt.want:
				t.Errorf("result\n got %s\nwant %s", got, tt.want)
			}
			if calls := tt.face.Calls(); !slices.Equal(calls, tt.wantCalls) {
				t.Errorf("face calls = %q, want %q", calls, tt.wantCalls)
			}
		})
	}
}

// TestExpressionEnum keeps the struct tag's enum equal to hal.Expressions(),
// the one list of expressions.
func TestExpressionEnum(t *testing.T) {
	r := register(t, &builtin.Options{Face: &haltest.Face{}})
	tool, _ := r.Lookup("set_virtual_human_expression")
	var got []hal.Expression
	for _, v := range tool.Parameters.Properties["expression"].Enum {
		got = append(got, hal.Expression(v.(string)))
	}
	if want := hal.Expressions(); !slices.Equal(got, want) {
		t.Errorf("enum = %q, want hal.Expressions() = %q", got, want)
	}
}

type status struct {
	Status        string   `json:"status"`
	Message       string   `json:"message"`
	Volume        *int     `json:"volume"`
	Expression    string   `json:"expression"`
	UptimeSeconds int64    `json:"uptime_seconds"`
	Uptime        string   `json:"uptime"`
	Version       string   `json:"version"`
	Connection    string   `json:"connection"`
	Errors        []string `json:"errors"`
}

func getStatus(t *testing.T, r *tools.Registry) status {
	t.Helper()
	got, err := call(t, r, "get_device_status", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var s status
	if err := json.Unmarshal([]byte(got), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDeviceStatus(t *testing.T) {
	const up = 26*time.Hour + 3*time.Minute + 4*time.Second
	opts := &builtin.Options{
		Speaker:   &haltest.Speaker{Level: 65},
		Face:      &haltest.Face{Shown: hal.Smile},
		Version:   "1.2.3",
		Start:     time.Now().Add(-up),
		ConnState: func() string { return "registered" },
	}
	for _, tt := range []struct {
		lang, message, uptime string
	}{
		{"", "音量 65，表情 smile，已运行 1天2小时3分4秒，版本 1.2.3，连接状态 registered", "1天2小时3分4秒"},
		{"en", "Volume 65, expression smile, up 1d 2h 3m 4s, version 1.2.3, connection registered", "1d 2h 3m 4s"},
	} {
		opts.Language = tt.lang
		s := getStatus(t, register(t, opts))
		// The clock runs on between Start and the call: allow a few seconds,
		// and compare the texts only when none have passed.
		if s.UptimeSeconds < int64(up/time.Second) || s.UptimeSeconds > int64(up/time.Second)+5 {
			t.Errorf("uptime_seconds = %d, want about %d", s.UptimeSeconds, int64(up/time.Second))
		}
		if s.UptimeSeconds == int64(up/time.Second) && (s.Message != tt.message || s.Uptime != tt.uptime) {
			t.Errorf("message = %q, uptime %q; want %q, %q", s.Message, s.Uptime, tt.message, tt.uptime)
		}
		if s.Status != "success" || s.Volume == nil || *s.Volume != 65 || s.Expression != "smile" ||
			s.Version != "1.2.3" || s.Connection != "registered" || s.Errors != nil {
			t.Errorf("status = %+v", s)
		}
	}
	if opts.Language != "en" || opts.Start.IsZero() {
		t.Error("Register modified the caller's options")
	}
}

func TestDeviceStatusDefaultsAndFailures(t *testing.T) {
	s := getStatus(t, register(t, nil))
	if s.Status != "success" || s.Volume != nil || s.Expression != "" || s.Version != "unknown" ||
		s.Connection != "unknown" || s.UptimeSeconds > 5 || !strings.HasPrefix(s.Message, "已运行 ") {
		t.Errorf("status without hardware = %+v", s)
	}

	hwErr := errors.New("bus error")
	s = getStatus(t, register(t, &builtin.Options{
		Speaker:  &haltest.Speaker{VolumeErr: hwErr},
		Face:     &haltest.Face{Shown: hal.Cry},
		Language: "en",
	}))
	if s.Status != "partial" || s.Volume != nil || s.Expression != "cry" ||
		!slices.Equal(s.Errors, []string{"cannot read the volume: bus error"}) ||
		!strings.HasPrefix(s.Message, "Expression cry, up ") || !strings.HasSuffix(s.Message, ", cannot read the volume: bus error") {
		t.Errorf("status with a failing speaker = %+v", s)
	}
}

func TestDeclarations(t *testing.T) {
	spk, face := &haltest.Speaker{}, &haltest.Face{}
	tests := []struct {
		opts      *builtin.Options
		names     []string
		resources map[string][]string
	}{
		{&builtin.Options{Speaker: spk, Face: face},
			[]string{"amplify_volume", "set_virtual_human_expression", "get_device_status"},
			map[string][]string{"amplify_volume": {"speaker"}, "set_virtual_human_expression": {"face"}, "get_device_status": {"face", "speaker"}}},
		{&builtin.Options{Speaker: spk}, []string{"amplify_volume", "get_device_status"},
			map[string][]string{"amplify_volume": {"speaker"}, "get_device_status": {"speaker"}}},
		{nil, []string{"get_device_status"}, map[string][]string{"get_device_status": nil}},
	}
	for _, tt := range tests {
		r := register(t, tt.opts)
		var names []string
		for _, tool := range r.Tools() {
			names = append(names, tool.Name)
			if !slices.Equal(tool.Resources, tt.resources[tool.Name]) {
				t.Errorf("%s resources = %q, want %q", tool.Name, tool.Resources, tt.resources[tool.Name])
			}
			if tool.MainType != tools.Remote {
				t.Errorf("%s main_type = %s", tool.Name, tool.MainType)
			}
		}
		if !slices.Equal(names, tt.names) {
			t.Errorf("tools = %q, want %q", names, tt.names)
		}
	}
	// Names is what a device with every part registers.
	if got, want := builtin.Names(), tests[0].names; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}

// TestWire pins the parameters and types each tool declares, and checks the
// language of the texts the model reads.
func TestWire(t *testing.T) {
	want := map[string]string{
		"amplify_volume": `{"name":"amplify_volume","main_type":"remote","sub_type":"control","parameters":{"type":"object",` +
			`"properties":{"level":{"type":"integer","minimum":0,"maximum":100}},"required":["level"],"additionalProperties":false}}`,
		"set_virtual_human_expression": `{"name":"set_virtual_human_expression","main_type":"remote","sub_type":"control","parameters":{"type":"object",` +
			`"properties":{"expression":{"type":"string","enum":["close_eyes_smile","close_eyes","amazed","smile","cry","idle"]}},"required":["expression"],"additionalProperties":false}}`,
		"get_device_status": `{"name":"get_device_status","main_type":"remote","sub_type":"query","parameters":{"type":"object","properties":{},"additionalProperties":false}}`,
	}
	for _, lang := range []string{"zh", "en"} {
		r := register(t, &builtin.Options{Speaker: &haltest.Speaker{}, Face: &haltest.Face{}, Language: lang})
		for _, d := range r.Declarations() {
			texts := []string{d.Description}
			for _, p := range d.Parameters.Properties {
				texts = append(texts, p.Description)
				p.Description = "" // compared separately
			}
			for _, text := range texts {
				if text == "" || hasHan(text) != (lang == "zh") {
					t.Errorf("%s %s: text %q is not in %s", lang, d.Name, text, lang)
				}
			}
			d.Description = ""
			got, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Replace(want[d.Name], `{"name":`, `{"description":"","name":`, 1); !jsonEq(got, w) {
				t.Errorf("%s declares\n %s\nwant\n %s", d.Name, got, w)
			}
		}
	}
}

func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x4e00 && r <= 0x9fff {
			return true
		}
	}
	return false
}

func jsonEq(a []byte, b string) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return string(ca) == string(cb)
}

func TestRegisterErrors(t *testing.T) {
	if err := builtin.Register(tools.NewRegistry(), &builtin.Options{Language: "fr"}); err == nil ||
		err.Error() != `builtin: unsupported language "fr" (want "zh" or "en")` {
		t.Errorf("Register(fr) = %v", err)
	}
	r := tools.NewRegistry()
	if err := builtin.Register(r, &builtin.Options{Speaker: &haltest.Speaker{}}); err != nil {
		t.Fatal(err)
	}
	err := builtin.Register(r, &builtin.Options{Speaker: &haltest.Speaker{}, Face: &haltest.Face{}})
	if err == nil || !strings.Contains(err.Error(), `"amplify_volume" is already registered`) {
		t.Errorf("second Register = %v, want a duplicate error", err)
	}
	if _, ok := r.Lookup("set_virtual_human_expression"); ok {
		t.Error("a failed Register added some of its tools")
	}
}

// Only parts their builder declares instant make the tools Inline: a part's type says nothing.
func TestInstantMakesToolsInline(t *testing.T) {
	for _, instant := range []bool{false, true} {
		r := register(t, &builtin.Options{Speaker: &haltest.Speaker{Level: 50}, Face: &haltest.Face{}, Instant: instant})
		ts := r.Tools()
		if len(ts) != 3 {
			t.Fatalf("%d tools, want 3", len(ts))
		}
		for _, tl := range ts {
			if tl.Inline != instant {
				t.Errorf("Instant=%v: %s.Inline = %v", instant, tl.Name, tl.Inline)
			}
		}
	}
}
