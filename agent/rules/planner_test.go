package rules

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/protocol"
)

// The world starts with the volume at 40 and the face idle.
var planTests = []struct {
	text  string
	calls []string // "tool input", input as encoding/json writes a map: keys sorted
	reply string   // the whole reply
}{
	// Volume, absolute.
	{"把音量调到30", []string{`amplify_volume {"level":30}`}, "好的，音量调到30了。"},
	{"音量三十", []string{`amplify_volume {"level":30}`}, "好的，音量调到30了。"},
	{"音量调成百分之五十", []string{`amplify_volume {"level":50}`}, "好的，音量调到50了。"},
	{"调到二十五", []string{`amplify_volume {"level":25}`}, "好的，音量调到25了。"},
	{"请把声音调到一百", []string{`amplify_volume {"level":100}`}, "好的，音量调到100了。"},
	{"音量60%", []string{`amplify_volume {"level":60}`}, "好的，音量调到60了。"},
	{"音量８０", []string{`amplify_volume {"level":80}`}, "好的，音量调到80了。"},
	{"set the volume to 50", []string{`amplify_volume {"level":50}`}, "OK, the volume is now 50."},
	{"turn it down to 20", []string{`amplify_volume {"level":20}`}, "OK, the volume is now 20."},
	{"Turn it up to 75, please", []string{`amplify_volume {"level":75}`}, "OK, the volume is now 75."},
	{"volume 80", []string{`amplify_volume {"level":80}`}, "OK, the volume is now 80."},
	{"ｖｏｌｕｍｅ ６５", []string{`amplify_volume {"level":65}`}, "OK, the volume is now 65."},
	{"set volume to fifty five", []string{`amplify_volume {"level":55}`}, "OK, the volume is now 55."},
	{"静音", []string{`amplify_volume {"level":0}`}, "好的，已静音。"},
	{"mute", []string{`amplify_volume {"level":0}`}, "OK, muted."},
	{"最大音量", []string{`amplify_volume {"level":100}`}, "好的，音量调到100了。"},
	{"音量开到最大", []string{`amplify_volume {"level":100}`}, "好的，音量调到100了。"},
	{"max volume", []string{`amplify_volume {"level":100}`}, "OK, the volume is now 100."},
	{"音量调到150", nil, "音量只能设在0到100之间，150超出了范围。"},
	{"set the volume to 101", nil, "The volume goes from 0 to 100; 101 is out of range."},
	// Volume, relative: read the level first.
	{"大声一点", []string{`get_device_status {}`, `amplify_volume {"level":50}`}, "好的，音量从40调到50了。"},
	{"小声点", []string{`get_device_status {}`, `amplify_volume {"level":30}`}, "好的，音量从40调到30了。"},
	{"声音大一点", []string{`get_device_status {}`, `amplify_volume {"level":50}`}, "好的，音量从40调到50了。"},
	{"louder", []string{`get_device_status {}`, `amplify_volume {"level":50}`}, "OK, the volume went from 40 to 50."},
	{"quieter", []string{`get_device_status {}`, `amplify_volume {"level":30}`}, "OK, the volume went from 40 to 30."},
	{"turn it up", []string{`get_device_status {}`, `amplify_volume {"level":50}`}, "OK, the volume went from 40 to 50."},
	{"turn it up by 25", []string{`get_device_status {}`, `amplify_volume {"level":65}`}, "OK, the volume went from 40 to 65."},
	{"音量加二十", []string{`get_device_status {}`, `amplify_volume {"level":60}`}, "好的，音量从40调到60了。"},
	{"调小七十", []string{`get_device_status {}`, `amplify_volume {"level":0}`}, "好的，音量从40调到0了。"},
	// Face.
	{"笑一个", []string{`set_virtual_human_expression {"expression":"smile"}`}, "好的，换成微笑的表情了。"},
	{"smile", []string{`set_virtual_human_expression {"expression":"smile"}`}, "OK, now showing a smile."},
	{"look amazed", []string{`set_virtual_human_expression {"expression":"amazed"}`}, "OK, now showing an amazed face."},
	{"惊讶", []string{`set_virtual_human_expression {"expression":"amazed"}`}, "好的，换成惊讶的表情了。"},
	{"哭", []string{`set_virtual_human_expression {"expression":"cry"}`}, "好的，换成哭的表情了。"},
	{"cry", []string{`set_virtual_human_expression {"expression":"cry"}`}, "OK, now showing a crying face."},
	{"闭眼", []string{`set_virtual_human_expression {"expression":"close_eyes"}`}, "好的，换成闭眼的表情了。"},
	{"close your eyes", []string{`set_virtual_human_expression {"expression":"close_eyes"}`}, "OK, now showing closed eyes."},
	{"眯眼笑", []string{`set_virtual_human_expression {"expression":"close_eyes_smile"}`}, "好的，换成眯眼笑的表情了。"},
	{"close your eyes and smile", []string{`set_virtual_human_expression {"expression":"close_eyes_smile"}`}, "OK, now showing a smile with closed eyes."},
	{"恢复正常", []string{`set_virtual_human_expression {"expression":"idle"}`}, "好的，换成平静的表情了。"},
	{"neutral", []string{`set_virtual_human_expression {"expression":"idle"}`}, "OK, now showing a neutral face."},
	{"别哭了", []string{`set_virtual_human_expression {"expression":"idle"}`}, "好的，换成平静的表情了。"},
	// Status.
	{"音量是多少", []string{`get_device_status {}`}, "现在音量是40。"},
	{"what's the volume?", []string{`get_device_status {}`}, "The volume is 40."},
	// Arithmetic.
	{"add 5 and 10", []string{`calculate {"expression":"5+10"}`}, "5+10 = 15."},
	{"3*(4+5)", []string{`calculate {"expression":"3*(4+5)"}`}, "3*(4+5) = 27."},
	{"5加10", []string{`calculate {"expression":"5+10"}`}, "5+10 等于 15。"},
	{"三加四", []string{`calculate {"expression":"3+4"}`}, "3+4 等于 7。"},
	{"what is 12 divided by 4", []string{`calculate {"expression":"12/4"}`}, "12/4 = 3."},
	{"十乘以三", []string{`calculate {"expression":"10*3"}`}, "10*3 等于 30。"},
	{"十除以四等于多少？", []string{`calculate {"expression":"10/4"}`}, "10/4 等于 2.5。"},
	{"subtract 3 from 10", []string{`calculate {"expression":"10-3"}`}, "10-3 = 7."},
	{"what's seven times eight?", []string{`calculate {"expression":"7*8"}`}, "7*8 = 56."},
	{"1/3", []string{`calculate {"expression":"1/3"}`}, "1/3 = 0.3333333333."},
	{"5/0", []string{`calculate {"expression":"5/0"}`}, "I couldn't calculate 5/0, it failed (Tool execution failed: division by zero, code -32000)."},
	// Memory without earlier memories.
	{"记住我喜欢科技", []string{`add_user_memory {"content":"我喜欢科技","topics":["科技","偏好"],"user_id":"u1"}`}, "好的，我记住了：你喜欢科技。"},
	{"remember that I like tea", []string{`add_user_memory {"content":"I like tea","topics":["tea","preference"],"user_id":"u1"}`}, "OK, I'll remember that you like tea."},
	{"Remember my name is Bob, and I live in Oslo", []string{`add_user_memory {"content":"my name is Bob, and I live in Oslo","topics":["note"],"user_id":"u1"}`},
		"OK, I'll remember that your name is Bob, and you live in Oslo."},
	{"我喜欢什么", []string{`search_user_memories {"limit":5,"query":"我喜欢","user_id":"u1"}`}, "关于这个，我还什么都没有记住。"},
	{"what do I like?", []string{`search_user_memories {"limit":5,"query":"I like","user_id":"u1"}`}, "I don't remember anything about that yet."},
	{"记住", nil, "要我记住什么？比如“记住我喜欢科技”。"},
	// Search.
	{"search for golang", []string{`search_web {"query":"golang"}`},
		`I couldn't search for "golang", it failed (Tool execution failed: search_web: no search backend is configured, code -32000).`},
	// Several intents.
	{"把音量调到30然后笑一个", []string{`amplify_volume {"level":30}`, `set_virtual_human_expression {"expression":"smile"}`},
		"好的，音量调到30了。好的，换成微笑的表情了。"},
	{"set volume to 30 and smile", []string{`amplify_volume {"level":30}`, `set_virtual_human_expression {"expression":"smile"}`},
		"OK, the volume is now 30. OK, now showing a smile."},
	{"音量调到二十，再哭一个", []string{`amplify_volume {"level":20}`, `set_virtual_human_expression {"expression":"cry"}`},
		"好的，音量调到20了。好的，换成哭的表情了。"},
	{"静音然后讲个笑话", []string{`amplify_volume {"level":0}`},
		"好的，已静音。抱歉，我没听懂“讲个笑话”。我现在能调音量（“把音量调到30”“大声一点”“静音”）、换表情（“笑一个”“惊讶”“闭眼”）、报告状态（“你现在状态怎么样”）、算术（“5加10”“3*(4+5)”）、记住你的事（“记住我喜欢科技”“我喜欢什么”“忘掉那条”）、上网搜索（“搜索 今天的新闻”）。"},
	// Said other ways.
	{"声音太大了", []string{`get_device_status {}`, `amplify_volume {"level":30}`}, "好的，音量从40调到30了。"},
	{"Volume: 45", []string{`amplify_volume {"level":45}`}, "OK, the volume is now 45."},
	{"请问三乘以五是多少", []string{`calculate {"expression":"3*5"}`}, "3*5 等于 15。"},
	{"我的名字是什么", []string{`search_user_memories {"limit":5,"query":"我的名字","user_id":"u1"}`}, "关于这个，我还什么都没有记住。"},
	{"hello, set volume to 20", []string{`amplify_volume {"level":20}`}, "Hi! OK, the volume is now 20."},
	{"把音量调回五十", []string{`amplify_volume {"level":50}`}, "好的，音量调到50了。"},
	{"音量调到三十点五", []string{`amplify_volume {"level":31}`}, "好的，音量调到31了。"},
	{"我明天要做什么", []string{`search_user_memories {"limit":5,"query":"我明天要","user_id":"u1"}`}, "关于这个，我还什么都没有记住。"},
	{"forget everything", nil, `I can only forget one memory at a time: say "forget that" after I mention it, or "forget that" followed by what it says.`},
	{"remember: buy milk", []string{`add_user_memory {"content":"buy milk","topics":["note"],"user_id":"u1"}`}, "OK, I'll remember: buy milk."},
	{"笑一个然后哭一个然后闭眼", []string{`set_virtual_human_expression {"expression":"smile"}`, `set_virtual_human_expression {"expression":"cry"}`,
		`set_virtual_human_expression {"expression":"close_eyes"}`}, "好的，换成微笑的表情了。好的，换成哭的表情了。好的，换成闭眼的表情了。"},
	// Small talk.
	{"谢谢", nil, "不客气！"},
	{"thank you", nil, "You're welcome!"},
}

func TestPlan(t *testing.T) {
	for _, tc := range planTests {
		t.Run(tc.text, func(t *testing.T) {
			w := newWorld(t)
			f := w.turn(t, tc.text)
			if err := plan(t, New(nil), f); err != nil {
				t.Fatalf("Plan: %v", err)
			}
			checkCalls(t, f, tc.calls)
			if got := f.reply(); got != tc.reply {
				t.Errorf("reply\n got %q\nwant %q", got, tc.reply)
			}
		})
	}
}

func checkCalls(t *testing.T, f *fakeTurn, want []string) {
	t.Helper()
	var got []string
	for _, c := range f.recorded() {
		got = append(got, c.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("%q: calls\n got %q\nwant %q", f.req.Text, got, want)
	}
}

// The world really changes: the device's volume and face are what was asked.
func TestPlanChangesTheDevice(t *testing.T) {
	w := newWorld(t)
	p := New(nil)
	for _, text := range []string{"把音量调到30然后笑一个", "大声一点", "louder"} {
		if err := plan(t, p, w.turn(t, text)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if v, _ := w.spk.Volume(ctx); v != 50 {
		t.Errorf("volume %d, want 50", v)
	}
	if e, _ := w.face.Expression(ctx); e != "smile" {
		t.Errorf("expression %q, want smile", e)
	}
}

// With the agent's default fast path, a control tool answers {"status":"success"} without
// the level: the reply names the level asked for.
func TestPlanFakeSuccess(t *testing.T) {
	w := newWorld(t)
	f := w.turn(t, "音量调到三十五")
	f.fakeSuccess = true
	if err := plan(t, New(nil), f); err != nil {
		t.Fatal(err)
	}
	if got, want := f.reply(), "好的，音量调到35了。"; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
}

func TestStatusReply(t *testing.T) {
	status := `{"status":"success","message":"...","volume":30,"expression":"smile","uptime_seconds":3725,"uptime":"1h 2m 5s","version":"1.0","connection":"registered"}`
	for _, tc := range []struct{ text, reply string }{
		{"你现在状态怎么样", "我很好。现在音量30，表情是微笑，已经运行了1小时2分5秒，连接状态：registered。"},
		{"状态", "我很好。现在音量30，表情是微笑，已经运行了1小时2分5秒，连接状态：registered。"},
		{"how are you", "I'm fine: volume 30, showing a smile, up for 1h 2m 5s, connection: registered."},
		{"status", "I'm fine: volume 30, showing a smile, up for 1h 2m 5s, connection: registered."},
	} {
		w := newWorld(t)
		f := w.turn(t, tc.text)
		f.override = map[string]func(json.RawMessage) (json.RawMessage, error){
			protocol.ToolStatus: func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(status), nil },
		}
		if err := plan(t, New(nil), f); err != nil {
			t.Fatal(err)
		}
		checkCalls(t, f, []string{`get_device_status {}`})
		if got := f.reply(); got != tc.reply {
			t.Errorf("%q: reply\n got %q\nwant %q", tc.text, got, tc.reply)
		}
	}
	// The real tool's result, from a device without a face: what it reports, nothing else.
	w := newWorld(t)
	f := w.turn(t, "how are you", protocol.ToolVolume, protocol.ToolStatus)
	if err := plan(t, New(nil), f); err != nil {
		t.Fatal(err)
	}
	if got := f.reply(); !strings.HasPrefix(got, "I'm fine: volume 40, showing a neutral face, up for ") ||
		!strings.HasSuffix(got, "s, connection: registered.") {
		t.Errorf("reply %q", got)
	}
}

func TestSearchResults(t *testing.T) {
	w := newWorld(t)
	var asked string
	w.web = func(q string) ([]map[string]any, error) {
		asked = q
		return []map[string]any{
			{"url": "https://go.dev/", "id": "r1", "title": "The Go Programming Language", "score": 0.9},
			{"url": "https://go.dev/doc/", "id": "r2", "title": "Documentation", "score": 0.8},
			{"url": "https://pkg.go.dev/", "id": "r3", "title": "Go Packages", "score": 0.7},
			{"url": "https://example.com/", "id": "r4", "title": "Fourth", "score": 0.1},
		}, nil
	}
	f := w.turn(t, "Search for Go, the language")
	if err := plan(t, New(nil), f); err != nil {
		t.Fatal(err)
	}
	if asked != "Go, the language" {
		t.Errorf("query %q, want the rest of the sentence as typed", asked)
	}
	want := "Here is what I found: 1. The Go Programming Language (https://go.dev/); 2. Documentation (https://go.dev/doc/); 3. Go Packages (https://pkg.go.dev/)."
	if got := f.reply(); got != want {
		t.Errorf("reply\n got %q\nwant %q", got, want)
	}
	w.web = func(string) ([]map[string]any, error) { return nil, nil }
	f = w.turn(t, "搜索 今天的新闻")
	if err := plan(t, New(nil), f); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f, []string{`search_web {"query":"今天的新闻"}`})
	if got, want := f.reply(), "没有搜到关于“今天的新闻”的结果。"; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
}

func TestUnknown(t *testing.T) {
	for _, tc := range []struct{ text, reply string }{
		{"讲个笑话", "抱歉，我没听懂“讲个笑话”。我现在能调音量"},
		{"今天天气怎么样", "抱歉，我没听懂“今天天气怎么样”。"},
		{"what's the weather like", `Sorry, I didn't understand "what's the weather like". Right now I can set the volume ("volume 50", "louder", "mute"); change my face`},
		{"asdf qwerty", `Sorry, I didn't understand "asdf qwerty".`},
		{"", "What would you like me to do? Right now I can set the volume"},
		{"   ", "What would you like me to do?"},
		{"大声一点还是小声一点", "抱歉，我没听懂"},
	} {
		w := newWorld(t)
		f := w.turn(t, tc.text)
		if err := plan(t, New(nil), f); err != nil {
			t.Fatal(err)
		}
		checkCalls(t, f, nil)
		if got := f.reply(); !strings.HasPrefix(got, tc.reply) {
			t.Errorf("%q: reply\n got %q\nwant prefix %q", tc.text, got, tc.reply)
		}
	}
}

func TestToolsAbsent(t *testing.T) {
	for _, tc := range []struct {
		text  string
		only  []string
		reply string
	}{
		{"笑一个", []string{protocol.ToolVolume, protocol.ToolStatus}, "这台设备没有脸，做不了表情。"},
		{"smile", []string{protocol.ToolStatus}, "This device has no face, so it can't show expressions."},
		{"louder", []string{protocol.ToolExpression, protocol.ToolStatus}, "This device has no volume control."},
		{"大声一点", []string{protocol.ToolVolume}, "我读不到现在的音量，没法相对调整；请说一个具体的数，比如“音量调到50”。"},
		{"记住我喜欢茶", []string{protocol.ToolVolume}, "记忆功能现在不可用。"},
		{"remember that I like tea", []string{protocol.ToolVolume}, "Memory is not available right now."},
		{"what do I like", []string{protocol.ToolVolume}, "Memory is not available right now."},
		{"forget that", []string{protocol.ToolVolume}, "Memory is not available right now."},
		{"add 5 and 10", []string{protocol.ToolVolume}, "I can't do arithmetic right now (there is no calculate tool)."},
		{"搜索 新闻", []string{protocol.ToolVolume}, "我现在不能上网搜索。"},
		{"状态", []string{protocol.ToolVolume}, "我读不到设备的状态。"},
		{"help", []string{protocol.ToolExpression, protocol.ToolStatus}, `Right now I can change my face ("smile", "look amazed", "close your eyes"); report my status ("how are you").`},
		{"你好", nil, "你好！我现在没有能用的工具。"},
		{"讲个笑话", []string{protocol.ToolStatus}, "抱歉，我没听懂“讲个笑话”。我现在能报告状态（“你现在状态怎么样”）。"},
	} {
		w := newWorld(t)
		only := tc.only
		if only == nil {
			only = []string{"none"}
		}
		f := w.turn(t, tc.text, only...)
		if err := plan(t, New(nil), f); err != nil {
			t.Fatal(err)
		}
		checkCalls(t, f, nil)
		if got := f.reply(); got != tc.reply {
			t.Errorf("%q with %v: reply\n got %q\nwant %q", tc.text, tc.only, got, tc.reply)
		}
	}
}

// A tool the planner does not know is listed honestly as one it cannot use.
func TestUnknownToolsListed(t *testing.T) {
	w := newWorld(t)
	f := w.turn(t, "what can you do", protocol.ToolStatus)
	d := f.decls[0]
	d.Name = "blink_leds"
	f.decls = append(f.decls, d)
	if err := plan(t, New(nil), f); err != nil {
		t.Fatal(err)
	}
	want := `Right now I can report my status ("how are you"); these tools I can't use by rule: blink_leds.`
	if got := f.reply(); got != want {
		t.Errorf("reply\n got %q\nwant %q", got, want)
	}
}

// The expression must be one the face's schema lists; the bounds of the level come from the
// schema too.
func TestSchemaLimits(t *testing.T) {
	w := newWorld(t)
	f := w.turn(t, "cry")
	for i, d := range f.decls {
		if d.Name == protocol.ToolExpression {
			f.decls[i].Parameters.Properties["expression"].Enum = []any{"smile", "idle"}
		}
		if d.Name == protocol.ToolVolume {
			hi := 20.0
			f.decls[i].Parameters.Properties["level"].Maximum = &hi
		}
	}
	if err := plan(t, New(nil), f); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f, nil)
	if got, want := f.reply(), "This face can't show a crying face; it can show: a smile, a neutral face."; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	f2 := w.turn(t, "volume 30")
	f2.decls = f.decls
	if err := plan(t, New(nil), f2); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f2, nil)
	if got, want := f2.reply(), "The volume goes from 0 to 20; 30 is out of range."; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	// Louder stops at the schema's maximum: 40 is already past it, so it comes down to 20.
	f3 := w.turn(t, "louder")
	f3.decls = f.decls
	if err := plan(t, New(nil), f3); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f3, []string{`get_device_status {}`, `amplify_volume {"level":20}`})
	// The loudest is the schema's maximum.
	f4 := w.turn(t, "max volume")
	f4.decls = f.decls
	if err := plan(t, New(nil), f4); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f4, []string{`amplify_volume {"level":20}`})
}

func TestToolErrors(t *testing.T) {
	fail := func(err error) func(json.RawMessage) (json.RawMessage, error) {
		return func(json.RawMessage) (json.RawMessage, error) { return nil, err }
	}
	for _, tc := range []struct {
		text  string
		tool  string
		err   error
		reply string
	}{
		{"把音量调到30", protocol.ToolVolume,
			&agent.ToolError{Code: protocol.CodeInvalidParams, Message: "Invalid params", Details: "tool_input.level: 30 is greater than the maximum 20"},
			"把音量调到30没有成功，参数不被接受（Invalid params: tool_input.level: 30 is greater than the maximum 20，错误码 -32602）。"},
		{"volume 30", protocol.ToolVolume,
			&agent.ToolError{Code: protocol.CodeServerError, Message: "Tool execution failed", Details: "amixer: device busy"},
			"I couldn't set the volume to 30, it failed (Tool execution failed: amixer: device busy, code -32000)."},
		{"smile", protocol.ToolExpression, &agent.ToolError{Code: protocol.CodeToolTimeout, Message: "Tool timed out"},
			"I couldn't show a smile, the device did not answer in time (Tool timed out, code -32001)."},
		{"louder", protocol.ToolStatus, &agent.ToolError{Code: protocol.CodeBusy, Message: "Busy"},
			"I couldn't read the current volume, the device is busy (Busy, code -32002)."},
		{"状态", protocol.ToolStatus, errors.New("boom"), "读取设备状态没有成功：boom。"},
		// The first intent fails, the second still runs.
		{"volume 30 and smile", protocol.ToolVolume, &agent.ToolError{Code: protocol.CodeServerError, Message: "Tool execution failed", Details: "no speaker"},
			"I couldn't set the volume to 30, it failed (Tool execution failed: no speaker, code -32000). OK, now showing a smile."},
	} {
		w := newWorld(t)
		f := w.turn(t, tc.text)
		f.override = map[string]func(json.RawMessage) (json.RawMessage, error){tc.tool: fail(tc.err)}
		if err := plan(t, New(nil), f); err != nil {
			t.Fatalf("%q: Plan: %v", tc.text, err)
		}
		if got := f.reply(); got != tc.reply {
			t.Errorf("%q: reply\n got %q\nwant %q", tc.text, got, tc.reply)
		}
	}
}

func TestDeviceGoneEndsTheTurn(t *testing.T) {
	w := newWorld(t)
	f := w.turn(t, "把音量调到30然后笑一个")
	f.override = map[string]func(json.RawMessage) (json.RawMessage, error){
		protocol.ToolVolume: func(json.RawMessage) (json.RawMessage, error) {
			return nil, agent.ErrDeviceGone
		},
	}
	err := plan(t, New(nil), f)
	if !errors.Is(err, agent.ErrDeviceGone) {
		t.Fatalf("Plan: %v, want ErrDeviceGone", err)
	}
	checkCalls(t, f, []string{`amplify_volume {"level":30}`}) // nothing after the drop
}

func TestCanceledTurn(t *testing.T) {
	w := newWorld(t)
	f := w.turn(t, "volume 30")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := New(nil).Plan(ctx, f); !errors.Is(err, context.Canceled) {
		t.Fatalf("Plan: %v, want context.Canceled", err)
	}
	checkCalls(t, f, nil)
}

func TestForget(t *testing.T) {
	w := newWorld(t)
	p := New(nil)
	say := func(session, text string, calls []string, reply string) {
		t.Helper()
		f := w.turn(t, text)
		f.req.SessionID = session
		if err := plan(t, p, f); err != nil {
			t.Fatal(err)
		}
		checkCalls(t, f, calls)
		if got := f.reply(); got != reply {
			t.Errorf("%q: reply\n got %q\nwant %q", text, got, reply)
		}
	}
	say("s1", "忘掉那条", nil, "这次对话里我还没有记住或找到哪条记忆，所以没有可以忘掉的。")
	say("s1", "记住我喜欢科技", []string{`add_user_memory {"content":"我喜欢科技","topics":["科技","偏好"],"user_id":"u1"}`}, "好的，我记住了：你喜欢科技。")
	say("s1", "记住我喜欢喝茶", []string{`add_user_memory {"content":"我喜欢喝茶","topics":["喝茶","偏好"],"user_id":"u1"}`}, "好的，我记住了：你喜欢喝茶。")
	// Another session did not add anything.
	say("s2", "forget that", nil, "There is nothing to forget: I haven't added or found a memory in this conversation.")
	say("", "forget that", nil, "There is nothing to forget: I haven't added or found a memory in this conversation.")
	say("s1", "忘掉那条", []string{`delete_user_memory {"memory_id":"memory-2","user_id":"u1"}`}, "好的，我忘掉了：你喜欢喝茶。")
	if got := w.mem.contents(); !slices.Equal(got, []string{"我喜欢科技"}) {
		t.Errorf("memories %q after forgetting the last one", got)
	}
	say("s1", "忘掉那条", nil, "这次对话里我还没有记住或找到哪条记忆，所以没有可以忘掉的。")
	// Found, then forgotten, in another session.
	say("s2", "我喜欢什么", []string{`search_user_memories {"limit":5,"query":"我喜欢","user_id":"u1"}`}, "我记得：你喜欢科技。")
	say("s2", "把那条忘掉", []string{`delete_user_memory {"memory_id":"memory-1","user_id":"u1"}`}, "好的，我忘掉了：你喜欢科技。")
	say("s2", "你记得什么", []string{`search_user_memories {"limit":5,"query":"偏好 备忘 喜欢 名字 生日 住在 工作 preference note like name birthday live work","user_id":"u1"}`}, "关于这个，我还什么都没有记住。")
	// Forgetting by content.
	say("s3", "remember that I like tea", []string{`add_user_memory {"content":"I like tea","topics":["tea","preference"],"user_id":"u1"}`}, "OK, I'll remember that you like tea.")
	say("s4", "forget that I like tea", []string{`search_user_memories {"limit":5,"query":"I like tea","user_id":"u1"}`, `delete_user_memory {"memory_id":"memory-3","user_id":"u1"}`},
		"OK, I forgot that you like tea.")
	say("s4", "forget that I like coffee", []string{`search_user_memories {"limit":5,"query":"I like coffee","user_id":"u1"}`}, `I don't have a memory about "I like coffee".`)
	// A memory deleted elsewhere meanwhile.
	say("s5", "remember that I like jazz", []string{`add_user_memory {"content":"I like jazz","topics":["jazz","preference"],"user_id":"u1"}`}, "OK, I'll remember that you like jazz.")
	w.mem.delete("u1", "memory-4")
	say("s5", "forget it", []string{`delete_user_memory {"memory_id":"memory-4","user_id":"u1"}`}, "That memory was already gone.")
	say("s5", "forget it", nil, "There is nothing to forget: I haven't added or found a memory in this conversation.")
}

// The default user is "default"; memories are found per user.
func TestMemoryUser(t *testing.T) {
	w := newWorld(t)
	p := New(nil)
	f := w.turn(t, "remember that I like tea")
	f.req.UserID = ""
	if err := plan(t, p, f); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f, []string{`add_user_memory {"content":"I like tea","topics":["tea","preference"],"user_id":"default"}`})
	f = w.turn(t, "what do I like")
	if err := plan(t, p, f); err != nil {
		t.Fatal(err)
	}
	if got, want := f.reply(), "I don't remember anything about that yet."; got != want {
		t.Errorf("user u1 sees the default user's memories: %q", got)
	}
	f = w.turn(t, "what do I like")
	f.req.UserID = ""
	if err := plan(t, p, f); err != nil {
		t.Fatal(err)
	}
	if got, want := f.reply(), "I remember: you like tea."; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
}

func TestSessionsBounded(t *testing.T) {
	p := New(&Options{MaxSessions: 2})
	for _, s := range []string{"a", "b", "c"} {
		p.setLastMemory(s, &memoryRef{id: s})
	}
	if p.lastMemory("a") != nil {
		t.Error("the oldest session was kept beyond MaxSessions")
	}
	if p.lastMemory("b") == nil || p.lastMemory("c") == nil {
		t.Error("a recent session was dropped")
	}
	if n := len(p.sessions); n != 2 {
		t.Errorf("%d sessions kept, want 2", n)
	}
}

// Options are copied: the caller's struct is not changed.
func TestOptionsCopied(t *testing.T) {
	o := &Options{}
	p := New(o)
	if o.Step != 0 || o.MaxSessions != 0 {
		t.Errorf("New changed the caller's options: %+v", o)
	}
	if p.opts.Step != 10 {
		t.Errorf("default step %d", p.opts.Step)
	}
	w := newWorld(t)
	f := w.turn(t, "louder")
	if err := plan(t, New(&Options{Step: 5}), f); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, f, []string{`get_device_status {}`, `amplify_volume {"level":45}`})
}
