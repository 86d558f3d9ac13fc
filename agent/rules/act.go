package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// turn is one Plan call: the request, the tools it may call and the reply so far.
type turn struct {
	p       *Planner
	ctx     context.Context
	t       agent.TurnContext
	req     agent.Request
	zh      bool
	decl    map[string]tools.Declaration
	said    bool // a chunk was streamed: the next English sentence needs a space
	several bool // the utterance asks for more than one thing
}

// say streams one sentence of the reply, in the request's language.
func (r *turn) say(zh, en string) {
	s := en
	if r.zh {
		s = zh
	}
	if r.said && !r.zh {
		s = " " + s
	}
	r.said = true
	r.t.Chunk(s)
}

// lang picks the Chinese or English form of a word.
func (r *turn) lang(zh, en string) string {
	if r.zh {
		return zh
	}
	return en
}

func (r *turn) has(name string) bool {
	_, ok := r.decl[name]
	return ok
}

func (r *turn) userID() string {
	if r.req.UserID == "" {
		return "default"
	}
	return r.req.UserID
}

// call runs a tool. An error it returns ends the turn (the device is gone, the turn is over);
// a tool's own failure comes back as failure, for the reply to explain.
func (r *turn) call(name string, input map[string]any) (result json.RawMessage, failure error, fatal error) {
	b, err := json.Marshal(input)
	if err != nil {
		return nil, nil, fmt.Errorf("rules: %s input: %w", name, err)
	}
	res, err := r.t.Call(r.ctx, name, b)
	if err == nil {
		return res, nil, nil
	}
	if errors.Is(err, agent.ErrDeviceGone) || r.ctx.Err() != nil {
		return nil, nil, fmt.Errorf("rules: %s: %w", name, err)
	}
	return nil, err, nil
}

// failed explains a tool's failure: what was tried, why it failed, and the tool's own words.
func (r *turn) failed(zhWhat, enWhat string, err error) {
	var te *agent.ToolError
	if !errors.As(err, &te) {
		r.say(fmt.Sprintf("%s没有成功：%s。", zhWhat, err), fmt.Sprintf("I couldn't %s: %s.", enWhat, err))
		return
	}
	var zhWhy, enWhy string
	switch te.Code {
	case protocol.CodeInvalidParams:
		zhWhy, enWhy = "参数不被接受", "the input was refused"
	case protocol.CodeToolTimeout:
		zhWhy, enWhy = "设备没有及时回答", "the device did not answer in time"
	case protocol.CodeBusy:
		zhWhy, enWhy = "设备正忙", "the device is busy"
	default:
		zhWhy, enWhy = "出错了", "it failed"
	}
	detail := te.Message
	if te.Details != "" {
		detail += ": " + te.Details
	}
	r.say(fmt.Sprintf("%s没有成功，%s（%s，错误码 %d）。", zhWhat, zhWhy, detail, te.Code),
		fmt.Sprintf("I couldn't %s, %s (%s, code %d).", enWhat, enWhy, detail, te.Code))
}

// do carries out one intent. The actions are in the file of their family: device.go (volume,
// face, status), calc.go, memory.go, search.go and remind.go.
func (r *turn) do(in intent) error {
	switch in.kind {
	case kVolumeSet:
		return r.setVolume(in.n)
	case kVolumeStep:
		return r.stepVolume(in)
	case kFace:
		return r.face(in.text)
	case kStatus:
		return r.status(in.volumeOnly)
	case kCalc:
		return r.calc(in.text)
	case kRemember:
		return r.remember(in.text)
	case kRecall:
		return r.recall(in.text)
	case kForget:
		if in.everything {
			r.say("我一次只能忘掉一条记忆：等我提到它之后说“忘掉那条”，或者说“忘掉”加上那条记忆的内容。",
				`I can only forget one memory at a time: say "forget that" after I mention it, or "forget that" followed by what it says.`)
			return nil
		}
		return r.forget(in.text)
	case kSearch:
		return r.search(in.text)
	case kHelp:
		if in.greet && r.several {
			r.say("你好！", "Hi!") // the rest of the sentence says what is wanted
			return nil
		}
		r.help(in.greet)
	case kThanks:
		r.say("不客气！", "You're welcome!")
	case kRemind, kTimer:
		return r.remind(in)
	case kListReminders:
		return r.listReminders()
	case kCancelReminder:
		return r.cancelReminders(in)
	case kTooLong:
		r.say(fmt.Sprintf("这句话太长了（超过%d个字），请说短一点。", in.n),
			fmt.Sprintf("That is too long for me (over %d characters); please say it in fewer words.", in.n))
	default:
		r.unknown(in.text)
	}
	return nil
}

// capabilities lists what the planner can do with the tools listed now.
func (r *turn) capabilities() string {
	var zh, en, other []string
	add := func(z, e string) { zh, en = append(zh, z), append(en, e) }
	if r.has(protocol.ToolVolume) {
		add("调音量（“把音量调到30”“大声一点”“静音”）", `set the volume ("volume 50", "louder", "mute")`)
	}
	if r.has(protocol.ToolExpression) {
		add("换表情（“笑一个”“惊讶”“闭眼”）", `change my face ("smile", "look amazed", "close your eyes")`)
	}
	if r.has(protocol.ToolStatus) {
		add("报告状态（“你现在状态怎么样”）", `report my status ("how are you")`)
	}
	if r.has(localtools.ToolCalculate) {
		add("算术（“5加10”“3*(4+5)”）", `do arithmetic ("add 5 and 10", "3*(4+5)")`)
	}
	if r.has(memory.ToolAdd) || r.has(memory.ToolSearch) {
		add("记住你的事（“记住我喜欢科技”“我喜欢什么”“忘掉那条”）",
			`remember things ("remember that I like tea", "what do I like", "forget that")`)
	}
	if r.has(localtools.ToolSearch) {
		add("上网搜索（“搜索 今天的新闻”）", `search the web ("search for today's news")`)
	}
	if r.has(reminders.ToolSet) {
		add("设提醒和计时（“10分钟后提醒我喝水”“计时5分钟”“我有哪些提醒”）",
			`set reminders and timers ("remind me in 5 minutes to stretch", "set a timer for 3 minutes", "what reminders do I have")`)
	}
	for _, d := range r.t.Tools() {
		if !slices.Contains(knownTools, d.Name) {
			other = append(other, d.Name)
		}
	}
	var b strings.Builder
	if len(zh) == 0 {
		b.WriteString(r.lang("我现在没有能用的工具", "I have no tools I can use right now"))
	} else {
		b.WriteString(r.lang("我现在能"+strings.Join(zh, "、"), "Right now I can "+strings.Join(en, "; ")))
	}
	if len(other) > 0 {
		b.WriteString(r.lang("；还有这些工具我不会按规则调用："+strings.Join(other, "、"),
			"; these tools I can't use by rule: "+strings.Join(other, ", ")))
	}
	b.WriteString(r.lang("。", "."))
	return b.String()
}

func (r *turn) help(greet bool) {
	if greet {
		r.say("你好！"+r.capabilities(), "Hi! "+r.capabilities())
		return
	}
	r.say(r.capabilities(), r.capabilities())
}

func (r *turn) unknown(text string) {
	if strings.TrimSpace(text) == "" {
		r.say("你想让我做什么？"+r.capabilities(), "What would you like me to do? "+r.capabilities())
		return
	}
	q := clip(text, 40)
	r.say("抱歉，我没听懂“"+q+"”。"+r.capabilities(), "Sorry, I didn't understand \""+q+"\". "+r.capabilities())
}

// numberField reads a number field of a JSON object result.
func numberField(res json.RawMessage, name string) (float64, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(res, &obj) != nil {
		return 0, false
	}
	var v float64
	if raw, ok := obj[name]; !ok || json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	return v, true
}
