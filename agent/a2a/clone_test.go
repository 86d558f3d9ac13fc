package a2a

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// cloneTask copies the fields of a2a-go's types that it knows; a field added in another version
// of a2a-go would be shared between a task and its copies. Count them.
func TestCloneTaskFields(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int
	}{{a2a.Task{}, 6}, {a2a.TaskStatus{}, 3}, {a2a.Message{}, 8}, {a2a.Artifact{}, 6}, {a2a.Part{}, 4}} {
		if got := reflect.TypeOf(tc.v).NumField(); got != tc.want {
			t.Errorf("%T has %d fields, cloneTask knows %d: copy the new ones in clone.go", tc.v, got, tc.want)
		}
	}
}

// A copy is equal to the task, and changing any part of it leaves the task as it was.
func TestCloneTaskIsDeep(t *testing.T) {
	at := time.Date(2023, 4, 1, 12, 0, 0, 0, time.UTC)
	meta := func() map[string]any {
		return map[string]any{"mac": "02-00-00-00-00-01", "n": 1.5, "nested": map[string]any{"list": []any{"x", map[string]any{"y": true}}}}
	}
	msg := func(id string) *a2a.Message {
		return &a2a.Message{ID: id, ContextID: "ctx", TaskID: "task", Role: a2a.MessageRoleUser, Extensions: []string{"ext"},
			ReferenceTasks: []a2a.TaskID{"other"}, Metadata: meta(), Parts: a2a.ContentParts{
				a2a.NewTextPart("hi"), {Content: a2a.Raw("raw"), MediaType: "application/octet-stream", Filename: "f", Metadata: meta()},
				{Content: a2a.Data{Value: map[string]any{"k": []any{1.0}}}}, {Content: a2a.URL("https://example.com/x")},
			}}
	}
	orig := &a2a.Task{ID: "task", ContextID: "ctx", Metadata: meta(),
		Status:    a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg("status"), Timestamp: &at},
		History:   []*a2a.Message{msg("m1"), msg("m2")},
		Artifacts: []*a2a.Artifact{{ID: "a", Name: "reply", Description: "d", Extensions: []string{"e"}, Metadata: meta(), Parts: msg("p").Parts}},
	}
	before := mustJSON(t, orig)
	c := cloneTask(orig)
	if got := mustJSON(t, c); got != before {
		t.Fatalf("copy %s\nwant %s", got, before)
	}
	// Change everything reachable from the copy.
	c.Metadata["mac"] = "changed"
	c.Metadata["nested"].(map[string]any)["list"].([]any)[1].(map[string]any)["y"] = false
	*c.Status.Timestamp = at.Add(time.Hour)
	c.Status.Message.Parts[0].Content = a2a.Text("changed")
	c.Status.Message.Extensions[0] = "changed"
	c.Status.Message.ReferenceTasks[0] = "changed"
	c.History[0].Metadata["n"] = 2.0
	c.History[1].Parts[1].Content.(a2a.Raw)[0] = 'X'
	c.History[1].Parts[1].Metadata["mac"] = "changed"
	c.History[1].Parts[2].Content.(a2a.Data).Value.(map[string]any)["k"].([]any)[0] = 2.0
	c.History = append(c.History[:1], msg("m3"))
	c.Artifacts[0].Parts[0] = a2a.NewTextPart("changed")
	c.Artifacts[0].Extensions[0] = "changed"
	c.Artifacts[0].Metadata["nested"] = nil
	if got := mustJSON(t, orig); got != before {
		t.Errorf("the task changed with its copy:\n%s\nwas %s", got, before)
	}
	if cloneTask(nil) != nil {
		t.Error("a copy of nil is not nil")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
