package rules

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/memory"
	agentstore "github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/hal/sim"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

// stubSearch is a search backend that answers from a table.
type stubSearch struct{}

func (stubSearch) Search(_ context.Context, query string, limit int) ([]localtools.Result, error) {
	return []localtools.Result{
		{URL: "https://go.dev/", ID: "result-1", Title: "Go: " + query, Score: 1},
		{URL: "https://go.dev/doc/", ID: "result-2", Title: "Documentation", Score: 0.5},
	}[:min(limit, 2)], nil
}

// realWorld is the device's built-in tools, the server's local tools of package localtools
// and the memory tools of package memory over SQLite: the planner meets the schemas and
// answers it meets in `devicectl serve`.
func realWorld(t *testing.T, search localtools.Backend) *world {
	t.Helper()
	w := &world{
		spk:  sim.NewSpeaker(&sim.SpeakerOptions{Volume: 40}),
		face: sim.NewFace(nil),
		reg:  tools.NewRegistry(),
	}
	if err := builtin.Register(w.reg, &builtin.Options{Speaker: w.spk, Face: w.face, Language: "zh",
		Start: time.Now(), ConnState: func() string { return "registered" }}); err != nil {
		t.Fatal(err)
	}
	if err := localtools.Register(w.reg, &localtools.Options{Search: search}); err != nil {
		t.Fatal(err)
	}
	db, err := agentstore.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store, err := memory.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.RegisterTools(w.reg, store); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWithRealTools(t *testing.T) {
	w := realWorld(t, nil)
	p := New(nil)
	for _, tc := range []struct{ text, reply string }{
		{"add 5 and 10", "5+10 = 15."},
		{"三加四", "3+4 等于 7。"},
		{"3*(4+5)", "3*(4+5) = 27."},
		{"十除以四等于多少", "10/4 等于 2.5。"},
		{"2的3次方", "2的3次方 等于 8。"},
		{"what is the square root of 16", "what is the square root of 16 = 4."},
		{"5/0", "I couldn't calculate 5/0, it failed"},
		{"99999999999*99999999999", "99999999999*99999999999 = 9999999999800000000001."},
		{"what is 2^64", "what is 2^64 = 18446744073709551616."},
		{"10^50+1", "10^50+1 = 1e+50."},
		{"1/3", "1/3 = 0.3333333333."},
		{"一千零十加五", "1010+5 等于 1015。"},
		{"两亿减一", "200000000-1 等于 199999999。"},
		{"记住我喜欢科技", "好的，我记住了：你喜欢科技。"},
		{"remember that my dog is called Max", "OK, I'll remember that your dog is called Max."},
		{"我喜欢什么", "我记得：你喜欢科技。"},
		{"what's my dog called", "I remember: your dog is called Max."},
		{"what do you remember about me", "I remember: "},
		{"你记得什么", "我记得："},
		{"忘掉那条", "好的，我忘掉了："},
		{"forget that my dog is called Max", "OK, I forgot that your dog is called Max."},
		{"我喜欢什么", "关于这个，我还什么都没有记住。"},
		{"search for golang", `I couldn't search for "golang", it failed (Tool execution failed: search_web: no search backend is configured`},
		{"把音量调到30然后笑一个", "好的，音量调到30了。好的，换成微笑的表情了。"},
		{"大声一点", "好的，音量从30调到40了。"},
	} {
		f := w.turn(t, tc.text)
		if err := plan(t, p, f); err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if got := f.reply(); !strings.HasPrefix(got, tc.reply) {
			t.Errorf("%q: reply\n got %q\nwant prefix %q\ncalls %v", tc.text, got, tc.reply, f.recorded())
		}
	}

	w = realWorld(t, stubSearch{})
	f := w.turn(t, "搜索 golang 教程")
	if err := plan(t, p, f); err != nil {
		t.Fatal(err)
	}
	if got, want := f.reply(), "我搜到了：1. Go: golang 教程 (https://go.dev/)；2. Documentation (https://go.dev/doc/)。"; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
}
