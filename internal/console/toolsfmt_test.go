package console

import (
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/tools"
)

func TestFormatTools(t *testing.T) {
	lo, hi := 0.0, 100.0
	decls := []tools.Declaration{
		{Name: "amplify_volume", MainType: "control", SubType: "hardware", Description: "设置音量。第二句。",
			Parameters: &jsonschema.Schema{Type: "object", PropertyOrder: []string{"level"}, Required: []string{"level"},
				Properties: map[string]*jsonschema.Schema{
					"level": {Type: "integer", Minimum: &lo, Maximum: &hi},
					"fade":  {Types: []string{"string", "null"}, Enum: []any{"slow", "fast"}},
					"extra": {},
				}}},
		{Name: "status", MainType: "query", SubType: "device", Description: "Reads the state. Then more.\nAnd more."},
	}
	want := "" +
		"amplify_volume  control/hardware  level: integer 0..100 (required); extra: any; fade: string|null slow|fast\n" +
		"                设置音量。\n" +
		"status          query/device      (no parameters)\n" +
		"                Reads the state.\n"
	if got := FormatTools(decls); got != want {
		t.Errorf("FormatTools:\n%s\nwant:\n%s", got, want)
	}
}

// Columns line up on screen: a Chinese name is as wide as it is drawn.
func TestFormatToolsWideNames(t *testing.T) {
	got := FormatTools([]tools.Declaration{
		{Name: "音量", MainType: "a", SubType: "b"},
		{Name: "volume", MainType: "a", SubType: "b"},
	})
	if want := "音量    a/b  (no parameters)\nvolume  a/b  (no parameters)\n"; got != want {
		t.Errorf("FormatTools:\n%s\nwant:\n%s", got, want)
	}
}
