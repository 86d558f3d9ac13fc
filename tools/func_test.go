package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
	"github.com/google/jsonschema-go/jsonschema"
)

var decl = tools.Declaration{Name: "t", Description: "d", MainType: tools.Remote, SubType: tools.Control}

func echo[In any](ctx context.Context, in In) (In, error) { return in, nil }

type Inner struct {
	Hz int `json:"hz" tool:"min=1,max=20"`
}

type everything struct {
	Level   int       `json:"level" jsonschema:"volume, 0 to 100" tool:"min=0,max=100"`
	Mode    string    `json:"mode,omitempty" tool:"enum=auto|manual"`
	Gain    *float64  `json:"gain,omitempty" tool:"min=-1.5,max=1.5"`
	Preset  *int      `json:"preset,omitempty" tool:"enum=1|2|3"`
	Steps   []uint8   `json:"steps,omitzero" tool:"max=10"`
	Colours [2]string `json:"colours" tool:"enum=red|green"`
	Blink   Inner     `json:"blink"`
	Blinks  []Inner   `json:"blinks,omitempty"`
	Ignored string    `json:"-"`
	private int
	Plain   bool
}

func TestFuncSchema(t *testing.T) {
	tests := []struct {
		name string
		tool func() (*tools.Tool, error)
		want string
	}{
		{"builtin volume", func() (*tools.Tool, error) { return tools.Func(decl, echo[volumeIn]) }, `{
			"type":"object",
			"properties":{"level":{"type":"integer","description":"volume, 0 to 100","minimum":0,"maximum":100}},
			"required":["level"],
			"additionalProperties":false}`},
		{"builtin expression", func() (*tools.Tool, error) { return tools.Func(decl, echo[expressionIn]) }, `{
			"type":"object",
			"properties":{"expression":{"type":"string","description":"the expression to show",
				"enum":["close_eyes_smile","close_eyes","amazed","smile","cry","idle"]}},
			"required":["expression"],
			"additionalProperties":false}`},
		{"no fields", func() (*tools.Tool, error) { return tools.Func(decl, echo[statusIn]) }, `{
			"type":"object","properties":{},"additionalProperties":false}`},
		{"every kind of field", func() (*tools.Tool, error) { return tools.Func(decl, echo[everything]) }, `{
			"type":"object",
			"properties":{
				"level":{"type":"integer","description":"volume, 0 to 100","minimum":0,"maximum":100},
				"mode":{"type":"string","enum":["auto","manual"]},
				"gain":{"type":["null","number"],"minimum":-1.5,"maximum":1.5},
				"preset":{"type":["null","integer"],"enum":[1,2,3,null]},
				"steps":{"type":["null","array"],"items":{"type":"integer","minimum":0,"maximum":10}},
				"colours":{"type":"array","items":{"type":"string","enum":["red","green"]},"minItems":2,"maxItems":2},
				"blink":{"type":"object","properties":{"hz":{"type":"integer","minimum":1,"maximum":20}},"required":["hz"],"additionalProperties":false},
				"blinks":{"type":["null","array"],"items":{"type":"object","properties":{"hz":{"type":"integer","minimum":1,"maximum":20}},"required":["hz"],"additionalProperties":false}},
				"Plain":{"type":"boolean"}
			},
			"required":["level","colours","blink","Plain"],
			"additionalProperties":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.tool()
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tool.Parameters)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(tt.want)) {
				t.Errorf("schema\n got %s\nwant %s", got, tt.want)
			}
			if err := tools.NewRegistry().Add(tool); err != nil {
				t.Errorf("Add: %v", err)
			}
		})
	}
}

// TestFuncWireOrder checks that properties go on the wire in struct order
// and the declaration keeps the seed's key order.
func TestFuncWireOrder(t *testing.T) {
	type in struct {
		Zeta  int `json:"zeta"`
		Alpha int `json:"alpha"`
	}
	tool := must(tools.Func(decl, echo[in]))(t)
	got, err := json.Marshal(tool.Declaration)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"t","description":"d","main_type":"remote","sub_type":"control","parameters":{"type":"object","properties":{"zeta":{"type":"integer"},"alpha":{"type":"integer"}},"required":["zeta","alpha"],"additionalProperties":false}}`
	if string(got) != want {
		t.Errorf("declaration\n got %s\nwant %s", got, want)
	}
}

func TestFuncHandler(t *testing.T) {
	boom := errors.New("speaker on fire")
	var got volumeIn
	tool := must(tools.Func(decl, func(ctx context.Context, in volumeIn) (*volumeOut, error) {
		got = in
		if in.Level == 13 {
			return nil, boom
		}
		return &volumeOut{Status: "success", Level: in.Level}, nil
	}))(t)

	res, err := tool.Invoke(context.Background(), json.RawMessage(`{"level":80}`))
	if err != nil || got.Level != 80 {
		t.Fatalf("Invoke = %v, %v; fn saw %+v", res, err, got)
	}
	b, _ := json.Marshal(res)
	if string(b) != `{"status":"success","level":80}` {
		t.Errorf("result marshals as %s", b)
	}
	if _, err := tool.Invoke(context.Background(), json.RawMessage(`{"level":13}`)); !errors.Is(err, boom) {
		t.Errorf("Invoke = %v, want the function's own error", err)
	}
	// Input that never validated does not reach fn as a half-decoded value.
	got = volumeIn{Level: -7}
	_, err = tool.Invoke(context.Background(), json.RawMessage(`{"level":"x"}`))
	if err == nil || !strings.HasPrefix(err.Error(), "decoding tool_input: ") || got.Level != -7 {
		t.Errorf("Invoke(bad input) = %v (fn saw %+v), want a decoding error before fn", err, got)
	}
}

func TestFuncIntegralFloats(t *testing.T) {
	tool := must(tools.Func(decl, echo[everything]))(t)
	res, err := tool.Invoke(context.Background(), json.RawMessage(
		`{"level":5e1,"preset":2.0,"steps":[1.0,2],"colours":["red","green"],"blink":{"hz":1E1},"Plain":true,"gain":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	in := res.(everything)
	if in.Level != 50 || *in.Preset != 2 || in.Steps[0] != 1 || in.Blink.Hz != 10 || *in.Gain != 0.5 || !in.Plain {
		t.Errorf("decoded %+v", in)
	}
}

func TestFuncRejects(t *testing.T) {
	type badType struct {
		C chan int `json:"c"`
	}
	type cyclic struct {
		Next *cyclic `json:"next"`
	}
	tests := []struct {
		name string
		fn   func() (*tools.Tool, error)
		want string
	}{
		{"not a struct", func() (*tools.Tool, error) { return tools.Func(decl, echo[int]) },
			`tools: tool "t": input type int is not a struct (tool_input is a JSON object)`},
		{"pointer", func() (*tools.Tool, error) { return tools.Func(decl, echo[*volumeIn]) },
			`input type *tools_test.volumeIn is not a struct`},
		{"map", func() (*tools.Tool, error) { return tools.Func(decl, echo[map[string]any]) }, `is not a struct`},
		{"channel field", func() (*tools.Tool, error) { return tools.Func(decl, echo[badType]) },
			`tools: tool "t": parameters from tools_test.badType: `},
		{"cycle", func() (*tools.Tool, error) { return tools.Func(decl, echo[cyclic]) }, `cycle detected`},
		{"parameters given", func() (*tools.Tool, error) {
			d := decl
			d.Parameters = &jsonschema.Schema{Type: "object"}
			return tools.Func(d, echo[volumeIn])
		}, `Parameters must be nil: Func infers them from tools_test.volumeIn`},
		{"nil function", func() (*tools.Tool, error) { return tools.Func[volumeIn, volumeIn](decl, nil) }, `nil function`},
		{"bad declaration", func() (*tools.Tool, error) {
			d := decl
			d.SubType = "read"
			return tools.Func(d, echo[volumeIn])
		}, `tools: tool "t": sub_type "read" is not "control" or "query"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.fn()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Func = %v, %v; want an error containing %q", tool, err, tt.want)
			}
		})
	}
}

// Types with malformed or misplaced `tool` tags, one per case.
type (
	tagEmpty struct {
		A int `tool:""`
	}
	tagNoValue struct {
		A int `tool:"min"`
	}
	tagUnknownKey struct {
		A int `tool:"minimum=1"`
	}
	tagSpace struct {
		A int `tool:"min=0, max=1"`
	}
	tagTwice struct {
		A int `tool:"min=0,min=1"`
	}
	tagMinNaN struct {
		A int `tool:"min=abc"`
	}
	tagMinFraction struct {
		A int `tool:"min=0.5"`
	}
	tagMinInf struct {
		A float64 `tool:"max=1e999"`
	}
	tagMinAboveMax struct {
		A int `tool:"min=10,max=1"`
	}
	tagMinOnString struct {
		A string `tool:"min=1"`
	}
	tagMinOnBool struct {
		A bool `tool:"max=1"`
	}
	tagBelowType struct {
		A uint `tool:"min=-1"`
	}
	tagAboveType struct {
		A int8 `tool:"max=200"`
	}
	tagEnumEmpty struct {
		A string `tool:"enum="`
	}
	tagEnumHole struct {
		A string `tool:"enum=a||b"`
	}
	tagEnumDup struct {
		A string `tool:"enum=a|b|a"`
	}
	tagEnumNotInt struct {
		A int `tool:"enum=1|two"`
	}
	tagEnumNotNum struct {
		A float32 `tool:"enum=1.5|x"`
	}
	tagEnumOnBool struct {
		A bool `tool:"enum=true"`
	}
	tagEnumOnObject struct {
		A Inner `tool:"enum=x"`
	}
	tagOnOmitted struct {
		A string `json:"-" tool:"enum=x"`
	}
	tagOnUnexported struct {
		a int `tool:"min=1"`
	}
	tagNested struct {
		Items []struct {
			B int `json:"b" tool:"max=x"`
		} `json:"items"`
	}
)

func TestFuncTagErrors(t *testing.T) {
	tests := []struct {
		name string
		fn   func(tools.Declaration) (*tools.Tool, error)
		want string
	}{
		{"empty", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEmpty]) }, `field A: tag tool:"": empty tag`},
		{"no value", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagNoValue]) }, `field A: tag tool:"min": "min" is not key=value`},
		{"unknown key", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagUnknownKey]) }, `unknown key "minimum" (want enum, min or max)`},
		{"space", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagSpace]) }, `unknown key " max"`},
		{"twice", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagTwice]) }, `min given twice`},
		{"min not a number", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagMinNaN]) }, `min "abc" is not a number`},
		{"min not an integer", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagMinFraction]) }, `min 0.5 is not an integer`},
		{"max infinite", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagMinInf]) }, `max "1e999" is not a number`},
		{"min above max", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagMinAboveMax]) }, `min 10 is greater than max 1`},
		{"min on string", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagMinOnString]) }, `min needs an integer or number field, not a string`},
		{"max on bool", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagMinOnBool]) }, `max needs an integer or number field, not a boolean`},
		{"below the type", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagBelowType]) }, `min -1 is outside the field type's own range (min 0)`},
		{"above the type", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagAboveType]) }, `max 200 is outside the field type's own range (max 127)`},
		{"enum empty", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumEmpty]) }, `enum has no values`},
		{"enum hole", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumHole]) }, `enum value 2 is empty`},
		{"enum duplicate", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumDup]) }, `enum value "a" given twice`},
		{"enum not integer", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumNotInt]) }, `enum value "two" is not an integer`},
		{"enum not number", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumNotNum]) }, `enum value "x" is not a number`},
		{"enum on bool", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumOnBool]) }, `enum needs a string, integer or number field, not a boolean`},
		{"enum on object", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagEnumOnObject]) }, `not an object`},
		{"on omitted field", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagOnOmitted]) }, `field A: tag tool:"enum=x" on a field that is not part of the input`},
		{"on unexported field", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagOnUnexported]) }, `field a: tag tool:"min=1" on a field that is not part of the input`},
		{"nested", func(d tools.Declaration) (*tools.Tool, error) { return tools.Func(d, echo[tagNested]) }, `field Items: field B: tag tool:"max=x": max "x" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.fn(decl)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Func = %v, %v; want an error containing %q", tool, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), `tools: tool "t": parameters from tools_test.tag`) {
				t.Errorf("error %q does not name the tool and the type", err)
			}
		})
	}
}

// flatIn is an input of plain fields of every kind Prepare's decoding and encoding/json might
// disagree on.
type flatIn struct {
	I     int     `json:"i,omitempty"`
	I8    int8    `json:"i8,omitempty"`
	U     uint16  `json:"u,omitempty"`
	F     float64 `json:"f,omitempty"`
	S     string  `json:"s,omitempty"`
	B     bool    `json:"b,omitempty"`
	Mood  mood    `json:"mood,omitempty"`
	Plain string  `json:",omitempty"`
}

type mood string

// preparedMatchesDecode checks that a tool run through Prepare and Prepared.Invoke sees exactly
// the input Tool.Invoke (which parses the JSON) gives it.
func preparedMatchesDecode(t *testing.T, r *tools.Registry, tool *tools.Tool, input []byte) (accepted bool) {
	t.Helper()
	p, err := r.Prepare("flat", input)
	if err != nil {
		return false
	}
	fast, ferr := p.Invoke(context.Background())
	slow, serr := tool.Invoke(context.Background(), input)
	sameErr := (ferr == nil) == (serr == nil) && (ferr == nil || ferr.Error() == serr.Error())
	if !sameErr || fast != slow {
		t.Errorf("input %s: through Prepare %+v, %v; parsed again %+v, %v", input, fast, ferr, slow, serr)
	}
	return true
}

func flatRegistry(t testing.TB) (*tools.Registry, *tools.Tool) {
	tool := must(tools.Func(tools.Declaration{Name: "flat", Description: "d", MainType: tools.Remote, SubType: tools.Control}, echo[flatIn]))(t)
	r := tools.NewRegistry()
	if err := r.Add(tool); err != nil {
		t.Fatal(err)
	}
	return r, tool
}

func TestPreparedInvokeMatchesDecode(t *testing.T) {
	r, tool := flatRegistry(t)
	accepted := 0
	for _, input := range []string{
		`{"i":1,"i8":-128,"u":65535,"f":0.1,"s":"x\u00e9\ud83d\ude00","b":true,"mood":"calm","Plain":"p"}`,
		`{"i":9007199254740993,"f":9007199254740993}`, // past 2^53: int exact, float rounded as encoding/json does
		`{"i":5e1,"i8":1E2,"f":1e-400}`,
		`{"i8":300}`, `{"i8":-129}`, `{"u":-1}`, `{"u":65536}`, `{"u":2.0}`, `{"i":1.5}`,
		`{"i":1,"i":2}`, `{}`, ` {"s":""} `, `{"f":1e308}`, `{"f":-0}`,
	} {
		if preparedMatchesDecode(t, r, tool, []byte(input)) {
			accepted++
		}
	}
	if accepted < 8 {
		t.Errorf("only %d inputs were valid: the comparison hardly ran", accepted)
	}
	// A handler that wraps Func's is called through Prepared.Invoke like any other.
	wrapped := *tool
	wrapped.Name = "wrapped"
	inner := tool.Handler
	calls := 0
	wrapped.Handler = func(ctx context.Context, in json.RawMessage) (any, error) {
		calls++
		return inner(ctx, in)
	}
	if err := r.Add(&wrapped); err != nil {
		t.Fatal(err)
	}
	p, err := r.Prepare("wrapped", json.RawMessage(`{"i":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := p.Invoke(context.Background()); err != nil || res.(flatIn).I != 3 || calls != 1 {
		t.Errorf("wrapped handler: %+v, %v after %d calls", res, err, calls)
	}
}

// FuzzPreparedInvoke: whatever input Prepare accepts, Prepared.Invoke gives a Func tool the same
// input as parsing it again would.
func FuzzPreparedInvoke(f *testing.F) {
	r, tool := flatRegistry(f)
	for _, s := range []string{`{"i":1,"s":"a","b":false}`, `{"i8":127,"u":0,"f":-1.5e-3}`, `{"mood":"\u0000"}`, `{"i":-9223372036854775808}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		preparedMatchesDecode(t, r, tool, input)
	})
}

// BenchmarkFuncInvoke: validating and running a Func tool, through Validate and Tool.Invoke or
// Prepare and Prepared.Invoke, as package device does.
func BenchmarkFuncInvoke(b *testing.B) {
	r := newRegistry(b)
	input := json.RawMessage(`{"level":80}`)
	ctx := context.Background()
	b.Run("parse-again", func(b *testing.B) {
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
	})
	b.Run("prepared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := r.Prepare("amplify_volume", input)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Invoke(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
