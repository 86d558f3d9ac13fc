package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/devicectl/devicectl/protocol"
)

func TestToolNames(t *testing.T) {
	long := "/robots/{robotId}/arms/{armId}/joints/{jointId}/calibration/history/entries"
	type op struct{ method, path, id string }
	tests := []struct {
		name string
		ops  []op // already sorted by path then method, as operations returns them
		want []string
	}{
		{"valid operationId", []op{{"GET", "/pets", "listPets"}}, []string{"listPets"}},
		{"no operationId", []op{{"GET", "/pets/{petId}/toys", ""}}, []string{"get_pets_petId_toys"}},
		{"root path", []op{{"GET", "/", ""}}, []string{"get"}},
		{"invalid characters", []op{{"GET", "/pets", "pets.list (all)"}}, []string{"pets_list_all"}},
		{"unicode operationId", []op{{"GET", "/pets", "宠物列表"}}, []string{"get_pets"}},
		{"dashes kept", []op{{"GET", "/pet-shops/{shop-id}", ""}}, []string{"get_pet-shops_shop-id"}},
		{"clash of generated names", []op{{"GET", "/a.b", ""}, {"GET", "/a_b", ""}, {"GET", "/a/b", ""}},
			[]string{"get_a_b", "get_a_b_2", "get_a_b_3"}},
		{"valid operationId wins over an earlier generated name", []op{{"GET", "/a", ""}, {"POST", "/b", "get_a"}},
			[]string{"get_a_2", "get_a"}},
		// The hash is of the whole candidate name, "get_/robots/robotId/...".
		{"long path", []op{{"GET", long, ""}},
			[]string{"get_robots_robotId_arms_armId_joints_jointId_calibratio_e9f15c4c"}},
		{"long paths that differ at the end", []op{{"GET", long + "/a", ""}, {"GET", long + "/b", ""}},
			[]string{"get_robots_robotId_arms_armId_joints_jointId_calibratio_4f3f6aa6",
				"get_robots_robotId_arms_armId_joints_jointId_calibratio_8a9e9ee7"}},
		{"64 characters are kept", []op{{"GET", "/x", strings.Repeat("a", 64)}}, []string{strings.Repeat("a", 64)}},
		{"suffix within 64", []op{{"GET", "/x", strings.Repeat("a", 64) + "."}, {"GET", "/y", strings.Repeat("a", 64) + "!"}},
			[]string{strings.Repeat("a", 64), strings.Repeat("a", 62) + "_2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ops []*operation
			for _, o := range tt.ops {
				ops = append(ops, &operation{method: o.method, path: o.path, op: &openapi3.Operation{OperationID: o.id}})
			}
			names(ops)
			var got []string
			for _, op := range ops {
				got = append(got, op.name)
				if !protocol.ValidToolName(op.name) {
					t.Errorf("%q is not a valid name", op.name)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("names:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPropertyNames(t *testing.T) {
	p := func(in, name string) *openapi3.Parameter { return &openapi3.Parameter{In: in, Name: name} }
	tests := []struct {
		name    string
		params  []*openapi3.Parameter
		hasBody bool
		want    []string
	}{
		{"distinct", []*openapi3.Parameter{p("path", "petId"), p("query", "limit")}, true, []string{"petId", "limit"}},
		{"same name in two locations", []*openapi3.Parameter{p("query", "id"), p("header", "id"), p("query", "q")}, false,
			[]string{"query_id", "header_id", "q"}},
		{"parameter named body", []*openapi3.Parameter{p("query", "body")}, true, []string{"query_body"}},
		{"parameter named body, no body", []*openapi3.Parameter{p("query", "body")}, false, []string{"body"}},
		{"prefixed name taken", []*openapi3.Parameter{p("query", "id"), p("header", "id"), p("cookie", "query_id")}, false,
			[]string{"query_id_2", "header_id", "query_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := propertyNames(tt.params, tt.hasBody); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStyles checks the serialization of each style against the examples
// of the OpenAPI specification (object keys come sorted: B, G, R).
func TestStyles(t *testing.T) {
	const (
		str = `"blue"`
		arr = `["blue","black","brown"]`
		obj = `{"R":100,"G":200,"B":150}`
	)
	tests := []struct {
		in, style string
		explode   bool
		value     string
		want      string
	}{
		{"path", "simple", false, str, "blue"},
		{"path", "simple", false, arr, "blue,black,brown"},
		{"path", "simple", false, obj, "B,150,G,200,R,100"},
		{"path", "simple", true, obj, "B=150,G=200,R=100"},
		{"path", "label", false, str, ".blue"},
		{"path", "label", false, arr, ".blue,black,brown"},
		{"path", "label", true, arr, ".blue.black.brown"},
		{"path", "label", false, obj, ".B,150,G,200,R,100"},
		{"path", "label", true, obj, ".B=150.G=200.R=100"},
		{"path", "matrix", false, str, ";color=blue"},
		{"path", "matrix", false, arr, ";color=blue,black,brown"},
		{"path", "matrix", true, arr, ";color=blue;color=black;color=brown"},
		{"path", "matrix", false, obj, ";color=B,150,G,200,R,100"},
		{"path", "matrix", true, obj, ";B=150;G=200;R=100"},
		{"path", "simple", false, `"a/b;c,d?e f%"`, "a%2Fb%3Bc%2Cd%3Fe%20f%25"},
		{"query", "form", true, str, "color=blue"},
		{"query", "form", true, arr, "color=blue&color=black&color=brown"},
		{"query", "form", false, arr, "color=blue,black,brown"},
		{"query", "form", true, obj, "B=150&G=200&R=100"},
		{"query", "form", false, obj, "color=B,150,G,200,R,100"},
		{"query", "spaceDelimited", false, arr, "color=blue%20black%20brown"},
		{"query", "spaceDelimited", false, obj, "color=B%20150%20G%20200%20R%20100"},
		{"query", "pipeDelimited", false, arr, "color=blue%7Cblack%7Cbrown"},
		{"query", "pipeDelimited", true, arr, "color=blue&color=black&color=brown"},
		{"query", "deepObject", true, obj, "color[B]=150&color[G]=200&color[R]=100"},
		{"query", "deepObject", true, `{"a":{"b":1},"c":[1,2]}`, "color[a][b]=1&color[c]=1&color[c]=2"},
		{"query", "form", true, `"a b&c=d+e/ü"`, "color=a%20b%26c%3Dd%2Be%2F%C3%BC"},
		{"query", "form", true, `1e3`, "color=1e3"},
		{"query", "form", true, `true`, "color=true"},
		{"query", "form", true, `[]`, ""},
		{"query", "form", true, `[{"a":1}]`, "color=%7B%22a%22%3A1%7D"},
		{"header", "simple", false, str, "blue"},
		{"header", "simple", false, arr, "blue,black,brown"},
		{"header", "simple", false, obj, "B,150,G,200,R,100"},
		{"header", "simple", true, obj, "B=150,G=200,R=100"},
		{"cookie", "form", true, str, "color=blue"},
		{"cookie", "form", false, arr, "color=blue,black,brown"},
		{"cookie", "form", true, arr, "color=blue; color=black; color=brown"},
		{"cookie", "form", false, obj, "color=B,150,G,200,R,100"},
		{"cookie", "form", true, obj, "B=150; G=200; R=100"},
		{"cookie", "form", true, `"a b;c,d"`, "color=a%20b%3Bc%2Cd"},
	}
	for _, tt := range tests {
		t.Run(tt.in+" "+tt.style+" "+tt.value, func(t *testing.T) {
			p := &param{name: "color", in: tt.in, style: tt.style, explode: tt.explode}
			v, err := decode(json.RawMessage(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch tt.in {
			case "path":
				got = pathValue(p, v)
			case "query":
				got = strings.Join(queryValue(p, v), "&")
			case "header":
				got = headerValue(p, v)
			case "cookie":
				got = strings.Join(cookieValue(p, v), "; ")
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAllowReserved(t *testing.T) {
	p := &param{name: "path", in: "query", style: "form", explode: true, reserved: true}
	got := strings.Join(queryValue(p, "/a/b?c=d,e f"), "&")
	if want := "path=/a/b?c=d,e%20f"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestCutUTF8(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"},
		{"aé", 3, "aé"},
		{"a✓", 3, "a"},
		{"a✓", 2, "a"},
		{"a\xff\xff", 2, "a\xff"},
	}
	for _, tt := range tests {
		if got := string(cutUTF8([]byte(tt.in), tt.n)); got != tt.want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
