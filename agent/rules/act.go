package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/agent"
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
	case agent.CodeInvalidParams:
		zhWhy, enWhy = "参数不被接受", "the input was refused"
	case agent.CodeToolTimeout:
		zhWhy, enWhy = "设备没有及时回答", "the device did not answer in time"
	case agent.CodeBusy:
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

func (r *turn) setVolume(level int) error {
	d, ok := r.decl[toolVolume]
	if !ok {
		r.say("这台设备没有可以调的音量。", "This device has no volume control.")
		return nil
	}
	lo, hi := intBounds(d, "level", 0, 100)
	switch level {
	case levelMax:
		level = hi
	case levelMin:
		level = lo
	}
	if level < lo || level > hi {
		r.say(fmt.Sprintf("音量只能设在%d到%d之间，%d超出了范围。", lo, hi, level),
			fmt.Sprintf("The volume goes from %d to %d; %d is out of range.", lo, hi, level))
		return nil
	}
	res, failure, err := r.call(toolVolume, map[string]any{"level": level})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed(fmt.Sprintf("把音量调到%d", level), fmt.Sprintf("set the volume to %d", level), failure)
		return nil
	}
	got := level
	if v, ok := numberField(res, "level"); ok {
		got = int(v) // the device reports what the hardware holds
	}
	if got == 0 {
		r.say("好的，已静音。", "OK, muted.")
		return nil
	}
	r.say(fmt.Sprintf("好的，音量调到%d了。", got), fmt.Sprintf("OK, the volume is now %d.", got))
	return nil
}

func (r *turn) stepVolume(in intent) error {
	d, ok := r.decl[toolVolume]
	if !ok {
		r.say("这台设备没有可以调的音量。", "This device has no volume control.")
		return nil
	}
	if !r.has(toolStatus) {
		r.say("我读不到现在的音量，没法相对调整；请说一个具体的数，比如“音量调到50”。",
			"I can't read the current volume, so I can't change it by a step; say a level, like \"volume 50\".")
		return nil
	}
	res, failure, err := r.call(toolStatus, map[string]any{})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("读取现在的音量", "read the current volume", failure)
		return nil
	}
	v, ok := numberField(res, "volume")
	if !ok {
		r.say("设备没有告诉我现在的音量，没法相对调整；请说一个具体的数，比如“音量调到50”。",
			"The device did not report its volume, so I can't change it by a step; say a level, like \"volume 50\".")
		return nil
	}
	cur := int(v)
	step := in.n
	if !in.amount {
		step *= r.p.opts.Step
	}
	lo, hi := intBounds(d, "level", 0, 100)
	next := min(max(cur+step, lo), hi)
	if next == cur {
		if step > 0 {
			r.say(fmt.Sprintf("音量已经是最大（%d）了。", cur), fmt.Sprintf("The volume is already at its maximum (%d).", cur))
		} else {
			r.say(fmt.Sprintf("音量已经是最小（%d）了。", cur), fmt.Sprintf("The volume is already at its minimum (%d).", cur))
		}
		return nil
	}
	res, failure, err = r.call(toolVolume, map[string]any{"level": next})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed(fmt.Sprintf("把音量调到%d", next), fmt.Sprintf("set the volume to %d", next), failure)
		return nil
	}
	if got, ok := numberField(res, "level"); ok {
		next = int(got)
	}
	r.say(fmt.Sprintf("好的，音量从%d调到%d了。", cur, next), fmt.Sprintf("OK, the volume went from %d to %d.", cur, next))
	return nil
}

// faceNames are how the replies name the expressions.
var faceNames = map[string][2]string{
	"smile":            {"微笑", "a smile"},
	"close_eyes_smile": {"眯眼笑", "a smile with closed eyes"},
	"close_eyes":       {"闭眼", "closed eyes"},
	"amazed":           {"惊讶", "an amazed face"},
	"cry":              {"哭", "a crying face"},
	"idle":             {"平静", "a neutral face"},
}

func (r *turn) faceName(e string) string {
	if n, ok := faceNames[e]; ok {
		return r.lang(n[0], n[1])
	}
	return e
}

func (r *turn) face(expr string) error {
	d, ok := r.decl[toolFace]
	if !ok {
		r.say("这台设备没有脸，做不了表情。", "This device has no face, so it can't show expressions.")
		return nil
	}
	if enum := enumStrings(d, "expression"); enum != nil && !slices.Contains(enum, expr) {
		names := make([]string, len(enum))
		for i, e := range enum {
			names[i] = r.faceName(e)
		}
		r.say(fmt.Sprintf("这张脸做不出%s的表情，它能做：%s。", r.faceName(expr), strings.Join(names, "、")),
			fmt.Sprintf("This face can't show %s; it can show: %s.", r.faceName(expr), strings.Join(names, ", ")))
		return nil
	}
	_, failure, err := r.call(toolFace, map[string]any{"expression": expr})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("换成"+r.faceName(expr)+"的表情", "show "+r.faceName(expr), failure)
		return nil
	}
	r.say(fmt.Sprintf("好的，换成%s的表情了。", r.faceName(expr)), fmt.Sprintf("OK, now showing %s.", r.faceName(expr)))
	return nil
}

// deviceStatus is what the planner reads of get_device_status's result.
type deviceStatus struct {
	Volume        *float64 `json:"volume"`
	Expression    string   `json:"expression"`
	UptimeSeconds *float64 `json:"uptime_seconds"`
	Uptime        string   `json:"uptime"`
	Connection    string   `json:"connection"`
	Message       string   `json:"message"`
	Errors        []string `json:"errors"`
}

func (r *turn) status(volumeOnly bool) error {
	if !r.has(toolStatus) {
		r.say("我读不到设备的状态。", "I can't read the device's status.")
		return nil
	}
	res, failure, err := r.call(toolStatus, map[string]any{})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("读取设备状态", "read the device's status", failure)
		return nil
	}
	var st deviceStatus
	if json.Unmarshal(res, &st) != nil {
		r.say("设备回答了："+clip(string(res), 200)+"。", "The device answered: "+clip(string(res), 200)+".")
		return nil
	}
	if volumeOnly {
		if st.Volume == nil {
			r.say("设备没有告诉我音量。", "The device did not report its volume.")
			return nil
		}
		r.say(fmt.Sprintf("现在音量是%s。", formatNumber(*st.Volume)), fmt.Sprintf("The volume is %s.", formatNumber(*st.Volume)))
		return nil
	}
	var zh, en []string
	if st.Volume != nil {
		zh = append(zh, "音量"+formatNumber(*st.Volume))
		en = append(en, "volume "+formatNumber(*st.Volume))
	}
	if st.Expression != "" {
		zh = append(zh, "表情是"+r.faceName(st.Expression))
		en = append(en, "showing "+r.faceName(st.Expression))
	}
	if st.UptimeSeconds != nil && *st.UptimeSeconds >= 0 {
		zh = append(zh, "已经运行了"+uptime(*st.UptimeSeconds, true))
		en = append(en, "up for "+uptime(*st.UptimeSeconds, false))
	} else if st.Uptime != "" {
		zh = append(zh, "已经运行了"+st.Uptime)
		en = append(en, "up for "+st.Uptime)
	}
	if st.Connection != "" {
		zh = append(zh, "连接状态："+st.Connection)
		en = append(en, "connection: "+st.Connection)
	}
	if len(zh) == 0 {
		msg := st.Message
		if msg == "" {
			msg = clip(string(res), 200)
		}
		r.say("设备回答了："+msg+"。", "The device answered: "+msg+".")
		return nil
	}
	r.say("我很好。现在"+strings.Join(zh, "，")+"。", "I'm fine: "+strings.Join(en, ", ")+".")
	if len(st.Errors) > 0 {
		r.say("有些读数失败了："+strings.Join(st.Errors, "；")+"。", "Some readings failed: "+strings.Join(st.Errors, "; ")+".")
	}
	return nil
}

// uptime writes seconds as 1小时2分5秒 or 1h 2m 5s, from the largest non-zero unit.
func uptime(sec float64, zh bool) string {
	s := int64(sec)
	units := []struct {
		n      int64
		zh, en string
	}{{s / 86400, "天", "d"}, {s % 86400 / 3600, "小时", "h"}, {s % 3600 / 60, "分", "m"}, {s % 60, "秒", "s"}}
	var out []string
	for i, u := range units {
		if u.n == 0 && len(out) == 0 && i < len(units)-1 {
			continue
		}
		if zh {
			out = append(out, strconv.FormatInt(u.n, 10)+u.zh)
		} else {
			out = append(out, strconv.FormatInt(u.n, 10)+u.en)
		}
	}
	if zh {
		return strings.Join(out, "")
	}
	return strings.Join(out, " ")
}

func (r *turn) calc(expr string) error {
	d, ok := r.decl[toolCalc]
	if !ok {
		r.say("我现在不能算术（没有 calculate 工具）。", "I can't do arithmetic right now (there is no calculate tool).")
		return nil
	}
	if len(expr) < minLength(d, "expression") || fitString(d, "expression", expr) != expr {
		r.say("这个算式的长度超出了计算工具的限制。", "That expression is longer than the calculate tool accepts.")
		return nil
	}
	res, failure, err := r.call(toolCalc, map[string]any{"expression": expr})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("计算 "+expr, "calculate "+expr, failure)
		return nil
	}
	if d, ok := integerField(res, "result"); ok {
		r.say(fmt.Sprintf("%s 等于 %s。", expr, d), fmt.Sprintf("%s = %s.", expr, d))
		return nil
	}
	v, ok := numberField(res, "result")
	if !ok {
		var n float64
		if json.Unmarshal(res, &n) != nil {
			r.say("计算工具回答了："+clip(string(res), 200)+"。", "The calculate tool answered: "+clip(string(res), 200)+".")
			return nil
		}
		v = n
	}
	r.say(fmt.Sprintf("%s 等于 %s。", expr, formatResult(v)), fmt.Sprintf("%s = %s.", expr, formatResult(v)))
	return nil
}

// maxSaidDigits bounds the digits of an integer result said in full; a longer one is said
// as 10 significant digits and an exponent.
const maxSaidDigits = 40

// integerField reads an integer JSON number field with all its digits, as calculate answers
// 2^64: 18446744073709551616, which float64 would round.
func integerField(res json.RawMessage, name string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(res, &obj) != nil {
		return "", false
	}
	d := string(bytes.TrimSpace(obj[name]))
	digits := strings.TrimPrefix(d, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	if len(digits) > maxSaidDigits {
		sig := strings.TrimRight(digits[1:10], "0")
		if sig != "" {
			sig = "." + sig
		}
		return d[:len(d)-len(digits)] + digits[:1] + sig + "e+" + strconv.Itoa(len(digits)-1), true
	}
	return d, true
}

// formatResult writes a result with at most 10 significant digits: 1/3 is 0.3333333333.
func formatResult(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}

func (r *turn) memoryUnavailable() {
	r.say("记忆功能现在不可用。", "Memory is not available right now.")
}

// topicOf guesses a topic for a memory: what is liked in "I like tea" / 我喜欢科技.
var (
	reZhLike = regexp.MustCompile(`(?:喜欢|爱|讨厌|想要|想)(.+)$`)
	reEnLike = regexp.MustCompile(`(?i)\b(?:like|love|hate|prefer|enjoy|want)s? (.+)$`)
)

// topicsOf gives a memory its topics: what is liked, if it says, and a general one
// (偏好 / preference, or 备忘 / note) that a search for everything (generalQuery) finds.
// Each is cut to the length the tool's schema allows for an item.
func topicsOf(d tools.Declaration, content string) []string {
	zh := isChinese(content)
	re, general := reEnLike, "note"
	if zh {
		re, general = reZhLike, "备忘"
	}
	var topics []string
	if m := re.FindStringSubmatch(content); m != nil {
		if t := strings.TrimSpace(m[1]); t != "" {
			topics = append(topics, t)
			general = map[bool]string{true: "偏好", false: "preference"}[zh]
		}
	}
	topics = append(topics, general)
	maxLen := 30
	if p := property(d, "topics"); p != nil && p.Items != nil && p.Items.MaxLength != nil {
		maxLen = min(maxLen, *p.Items.MaxLength)
	}
	for i, t := range topics {
		if rs := []rune(t); len(rs) > maxLen {
			topics[i] = string(rs[:maxLen])
		}
	}
	return topics
}

// generalQuery stands for "everything" in a memory search, which has no way to list all:
// the general topics the planner gives every memory, and the words memories about a
// person usually hold.
const generalQuery = "偏好 备忘 喜欢 名字 生日 住在 工作 preference note like name birthday live work"

func (r *turn) remember(content string) error {
	d, ok := r.decl[toolAddMem]
	if !ok {
		r.memoryUnavailable()
		return nil
	}
	content = fitString(d, "content", content)
	if content == "" || len(content) < minLength(d, "content") {
		r.say("要我记住什么？比如“记住我喜欢科技”。", "What should I remember? For example \"remember that I like tea\".")
		return nil
	}
	in := map[string]any{"content": content}
	if property(d, "user_id") != nil {
		in["user_id"] = r.userID()
	}
	if property(d, "topics") != nil {
		in["topics"] = topicsOf(d, content)
	}
	res, failure, err := r.call(toolAddMem, in)
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("记住这件事", "remember that", failure)
		return nil
	}
	if id := memoryID(res); id != nil {
		r.p.setLastMemory(r.req.SessionID, &memoryRef{id: id, content: content})
	}
	en := "OK, I'll remember: " + content + "."
	if aboutMe.MatchString(content) {
		en = "OK, I'll remember that " + secondPerson(content) + "."
	}
	r.say("好的，我记住了："+secondPerson(content)+"。", en)
	return nil
}

// foundMemory is one result of search_user_memories.
type foundMemory struct {
	ID        any      `json:"id"`
	Memory    string   `json:"memory"`
	Content   string   `json:"content"`
	Relevance *float64 `json:"relevance"`
}

func (m foundMemory) text() string {
	if m.Memory != "" {
		return m.Memory
	}
	return m.Content
}

// searchMemories runs search_user_memories and returns what it found, best first, without
// the results it scores as not relevant at all.
func (r *turn) searchMemories(query string) (found []foundMemory, failure, fatal error) {
	d := r.decl[toolSearchMem]
	if query == "" {
		query = generalQuery
	}
	query = fitString(d, "query", query)
	in := map[string]any{"query": query}
	if property(d, "user_id") != nil {
		in["user_id"] = r.userID()
	}
	if property(d, "limit") != nil {
		lo, hi := intBounds(d, "limit", 1, 100)
		in["limit"] = min(max(5, lo), hi)
	}
	res, failure, err := r.call(toolSearchMem, in)
	if err != nil || failure != nil {
		return nil, failure, err
	}
	var list []foundMemory
	if err := json.Unmarshal(res, &list); err != nil {
		var wrapped struct {
			Memories []foundMemory `json:"memories"`
			Results  []foundMemory `json:"results"`
		}
		if err := json.Unmarshal(res, &wrapped); err != nil {
			return nil, fmt.Errorf("the memory search answered something unexpected: %s", clip(string(res), 100)), nil
		}
		list = append(wrapped.Memories, wrapped.Results...)
	}
	for _, m := range list {
		if m.text() == "" || m.Relevance != nil && *m.Relevance <= 0 {
			continue
		}
		found = append(found, m)
	}
	return found, nil, nil
}

func (r *turn) recall(query string) error {
	if !r.has(toolSearchMem) {
		r.memoryUnavailable()
		return nil
	}
	found, failure, err := r.searchMemories(query)
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("查找记忆", "search my memories", failure)
		return nil
	}
	if len(found) == 0 {
		r.say("关于这个，我还什么都没有记住。", "I don't remember anything about that yet.")
		return nil
	}
	if len(found) > 5 {
		found = found[:5]
	}
	said := make([]string, len(found))
	for i, m := range found {
		said[i] = secondPerson(m.text()) // each in its own language, as it was stored
	}
	if found[0].ID != nil {
		// "That" is now the best match: the one listed first.
		r.p.setLastMemory(r.req.SessionID, &memoryRef{id: found[0].ID, content: found[0].text()})
	}
	r.say("我记得："+strings.Join(said, "；")+"。", "I remember: "+strings.Join(said, "; ")+".")
	return nil
}

func (r *turn) forget(what string) error {
	if !r.has(toolDelMem) {
		r.memoryUnavailable()
		return nil
	}
	var ref *memoryRef
	if what == "" {
		ref = r.p.lastMemory(r.req.SessionID)
		if ref == nil {
			r.say("这次对话里我还没有记住或找到哪条记忆，所以没有可以忘掉的。",
				"There is nothing to forget: I haven't added or found a memory in this conversation.")
			return nil
		}
	} else {
		if !r.has(toolSearchMem) {
			r.say("我找不到记忆，没法知道要忘掉哪一条。", "I can't search my memories, so I can't tell which one to forget.")
			return nil
		}
		found, failure, err := r.searchMemories(what)
		if err != nil {
			return err
		}
		if failure != nil {
			r.failed("查找要忘掉的记忆", "find the memory to forget", failure)
			return nil
		}
		if len(found) == 0 {
			r.say("我没有找到关于“"+clip(what, 40)+"”的记忆。", "I don't have a memory about \""+clip(what, 40)+"\".")
			return nil
		}
		ref = &memoryRef{id: found[0].ID, content: found[0].text()}
		if ref.id == nil {
			r.say("记忆工具没有给出这条记忆的编号，我没法删掉它。", "The memory tool gave no id for that memory, so I can't delete it.")
			return nil
		}
	}
	d := r.decl[toolDelMem]
	id := ref.id
	switch {
	case isType(d, "memory_id", "integer") || isType(d, "memory_id", "number"):
		if s, ok := id.(string); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				id = n
			}
		}
	default:
		if n, ok := id.(json.Number); ok {
			id = n.String()
		} else if f, ok := id.(float64); ok {
			id = formatNumber(f)
		}
	}
	in := map[string]any{"memory_id": id}
	if property(d, "user_id") != nil {
		in["user_id"] = r.userID()
	}
	res, failure, err := r.call(toolDelMem, in)
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("忘掉这条记忆", "forget that memory", failure)
		return nil
	}
	r.p.setLastMemory(r.req.SessionID, nil)
	var deleted bool
	if json.Unmarshal(res, &deleted) != nil {
		var obj struct {
			Deleted *bool `json:"deleted"`
			Success *bool `json:"success"`
		}
		_ = json.Unmarshal(res, &obj)
		deleted = obj.Deleted != nil && *obj.Deleted || obj.Success != nil && *obj.Success
	}
	if !deleted {
		r.say("那条记忆已经不在了。", "That memory was already gone.")
		return nil
	}
	r.say("好的，我忘掉了："+secondPerson(ref.content)+"。", "OK, I forgot that "+secondPerson(ref.content)+".")
	return nil
}

// webResult is one result of search_web.
type webResult struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

func (r *turn) search(query string) error {
	d, ok := r.decl[toolSearch]
	if !ok {
		r.say("我现在不能上网搜索。", "I can't search the web right now.")
		return nil
	}
	query = fitString(d, "query", query)
	if query == "" || len(query) < minLength(d, "query") {
		r.say("要搜索什么？比如“搜索 今天的新闻”。", "What should I search for? For example \"search for today's news\".")
		return nil
	}
	res, failure, err := r.call(toolSearch, map[string]any{"query": query})
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("搜索“"+clip(query, 40)+"”", "search for \""+clip(query, 40)+"\"", failure)
		return nil
	}
	var results []webResult
	if json.Unmarshal(res, &results) != nil {
		var wrapped struct {
			Results []webResult `json:"results"`
		}
		if json.Unmarshal(res, &wrapped) != nil {
			r.say("搜索工具回答了："+clip(string(res), 200)+"。", "The search tool answered: "+clip(string(res), 200)+".")
			return nil
		}
		results = wrapped.Results
	}
	if len(results) == 0 {
		r.say("没有搜到关于“"+clip(query, 40)+"”的结果。", "I found nothing for \""+clip(query, 40)+"\".")
		return nil
	}
	if len(results) > 3 {
		results = results[:3]
	}
	items := make([]string, len(results))
	for i, res := range results {
		title := res.Title
		if title == "" {
			title = res.URL
		}
		items[i] = fmt.Sprintf("%d. %s (%s)", i+1, clip(title, 80), res.URL)
	}
	r.say("我搜到了："+strings.Join(items, "；")+"。", "Here is what I found: "+strings.Join(items, "; ")+".")
	return nil
}

// capabilities lists what the planner can do with the tools listed now.
func (r *turn) capabilities() string {
	var zh, en, other []string
	add := func(z, e string) { zh, en = append(zh, z), append(en, e) }
	if r.has(toolVolume) {
		add("调音量（“把音量调到30”“大声一点”“静音”）", `set the volume ("volume 50", "louder", "mute")`)
	}
	if r.has(toolFace) {
		add("换表情（“笑一个”“惊讶”“闭眼”）", `change my face ("smile", "look amazed", "close your eyes")`)
	}
	if r.has(toolStatus) {
		add("报告状态（“你现在状态怎么样”）", `report my status ("how are you")`)
	}
	if r.has(toolCalc) {
		add("算术（“5加10”“3*(4+5)”）", `do arithmetic ("add 5 and 10", "3*(4+5)")`)
	}
	if r.has(toolAddMem) || r.has(toolSearchMem) {
		add("记住你的事（“记住我喜欢科技”“我喜欢什么”“忘掉那条”）",
			`remember things ("remember that I like tea", "what do I like", "forget that")`)
	}
	if r.has(toolSearch) {
		add("上网搜索（“搜索 今天的新闻”）", `search the web ("search for today's news")`)
	}
	if r.has(toolSetReminder) {
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

// memoryID reads the id add_user_memory answered: "memory-456" as in seed 004, a number, or
// an object with an id.
func memoryID(res json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(res))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		if v != "" {
			return v
		}
	case json.Number:
		return v
	case map[string]any:
		for _, k := range []string{"id", "memory_id"} {
			if id, ok := v[k]; ok && id != nil {
				return id
			}
		}
	}
	return nil
}

// aboutMe matches English that starts with its speaker ("I like tea", "my dog is Max"), which
// reads back well after "that": "I'll remember that you like tea".
var aboutMe = regexp.MustCompile(`(?i)^(i|i'm|i've|i'd|i'll|my|me)\b`)

// reFirstPerson finds the English first person, to say a memory back to its owner.
var reFirstPerson = regexp.MustCompile(`(?i)\b(i'm|i've|i'll|i'd|i am|i was|i|me|my|mine|myself)\b`)

var secondPersonWords = map[string]string{
	"i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd", "i am": "you are",
	"i was": "you were", "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
}

// secondPerson turns what the person said about themselves into what the agent says back:
// 我喜欢科技 -> 你喜欢科技, "I like tea" -> "you like tea".
func secondPerson(s string) string {
	if isChinese(s) {
		return strings.ReplaceAll(s, "我", "你")
	}
	return reFirstPerson.ReplaceAllStringFunc(s, func(w string) string {
		return secondPersonWords[strings.ToLower(w)]
	})
}
