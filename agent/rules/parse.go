package rules

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// kind is what one intent asks for.
type kind uint8

const (
	kUnknown    kind = iota // text: what was not understood
	kVolumeSet              // n: the level asked for
	kVolumeStep             // n: the change asked for, signed; amount: n was said (else ±1: one step)
	kFace                   // text: an expression of the tool's enum
	kStatus                 // volumeOnly: the question was only about the volume
	kCalc                   // text: the expression in ASCII symbols
	kRemember               // text: what to remember ("" when nothing was said)
	kRecall                 // text: the memory search query ("" asks for everything)
	kForget                 // text: what to forget ("" is the memory last added or found)
	kSearch                 // text: the web search query
	kHelp                   // greet: it was a greeting
	kThanks
	kTooLong        // n: the limit, in characters
	kRemind         // when, text: a reminder (when unset: no time was said)
	kTimer          // when.in: a countdown
	kListReminders  //
	kCancelReminder // text: what the reminder says ("" the only one); everything: all of them
)

// intent is one thing the person asked for.
type intent struct {
	kind       kind
	n          int
	text       string
	volumeOnly bool
	amount     bool
	greet      bool
	everything bool // kForget: all memories were asked for; kCancelReminder: all reminders
	when       when // kRemind, kTimer
}

// absorbing reports whether the intent takes the rest of its segment as content, so that the
// segment is not split further: "remember that I like tea and cake", "add 5 and 10".
func (in intent) absorbing() bool {
	switch in.kind {
	case kCalc, kRemember, kRecall, kForget, kSearch, kRemind, kTimer, kCancelReminder:
		return true
	case kFace:
		return in.text == "close_eyes_smile" // "close your eyes and smile" is one face
	}
	return false
}

// maxIntents bounds the work one utterance can ask for.
const maxIntents = 8

// maxInput bounds the characters of an utterance the planner reads, so that a turn costs
// little whatever is sent; no request the grammar knows comes near it.
const maxInput = 1000

// parse reads an utterance into intents, in the order they were said. Parts it does not
// understand become kUnknown intents, so that the reply can say so.
func parse(text string) []intent {
	if atLeastRunes(text, maxInput+1) {
		return []intent{{kind: kTooLong, n: maxInput}}
	}
	whole := stripLead(newSegment(normalize(text)))
	if whole.low == "" {
		return []intent{{kind: kUnknown}}
	}
	// A reminder, remember and search take the rest of the sentence, commas included.
	// (Forget first: "忘记" is not "记".)
	if in, ok := parseRemind(whole, "", ""); ok {
		return []intent{in}
	}
	if _, ok := parseForget(whole, whole.words(), ""); !ok {
		if in, ok := parseRemember(whole, "", ""); ok {
			return []intent{in}
		}
		if in, ok := parseSearch(whole, whole.words(), ""); ok && in.kind == kSearch {
			return []intent{in}
		}
	}
	var out []intent
	for _, seg := range splitOn(whole, strongSeparators) {
		out = append(out, parseSegment(seg)...)
		if len(out) >= maxIntents {
			return out[:maxIntents]
		}
	}
	if len(out) == 0 {
		return []intent{{kind: kUnknown, text: whole.orig}}
	}
	return out
}

// parseSegment reads one segment: one intent, or several joined by a soft separator when
// each part is understood on its own ("set volume to 30 and smile").
func parseSegment(seg segment) []intent {
	seg = stripLead(seg)
	if seg.low == "" {
		return nil
	}
	in, ok := parseOne(seg)
	if ok && in.absorbing() {
		return []intent{in}
	}
	if parts := splitOn(seg, softSeparators); len(parts) > 1 {
		var ins []intent
		for _, p := range parts {
			p = stripLead(p)
			pin, pok := parseOne(p)
			if !pok {
				ins = nil
				break
			}
			ins = append(ins, pin)
		}
		if ins != nil {
			return ins
		}
	}
	if ok {
		return []intent{in}
	}
	return []intent{{kind: kUnknown, text: seg.orig}}
}

// parseOne reads a segment as exactly one intent. The order matters: the more specific
// readings come first (forget before remember, search before face, volume before arithmetic).
func parseOne(seg segment) (intent, bool) {
	if seg.low == "" {
		return intent{}, false
	}
	w := seg.words()
	num := digitizeEn(digitizeZh(seg.low))
	for _, f := range []func(segment, string, string) (intent, bool){
		parseRemind, parseForget, parseRemember, parseSearch, parseRecall, parseThanks,
		parseStatus, parseVolume, parseFace, parseCalc, parseHelp,
	} {
		if in, ok := f(seg, w, num); ok {
			return in, true
		}
	}
	return intent{}, false
}

// cutPrefix returns the rest of seg after the first of prefixes it starts with.
func cutPrefix(seg segment, prefixes ...string) (segment, bool) {
	for _, p := range prefixes {
		if strings.HasPrefix(seg.low, p) {
			return seg.cut(len(p), len(seg.orig)), true
		}
	}
	return seg, false
}

// trimContent removes what joins a verb to its object: "记住：", "remember, ", 一下.
func trimContent(seg segment) segment {
	i := 0
	for changed := true; changed; {
		changed = false
		for _, p := range []string{":", ",", "、", " ", "一下", "下"} {
			if strings.HasPrefix(seg.low[i:], p) {
				i += len(p)
				changed = true
			}
		}
	}
	if i == 0 {
		return seg
	}
	return seg.cut(i, len(seg.orig))
}

// Forgetting: "忘掉那条" / "forget that" name the memory last added or found; "忘掉我喜欢茶"
// / "forget that I like tea" name one by what it says.
var (
	zhForgetVerbs = []string{"忘掉", "忘记", "忘了", "删掉", "删除", "别记着", "不要记着"}
	zhThatOne     = map[string]bool{
		"": true, "那条": true, "这条": true, "它": true, "那个": true, "这个": true, "刚才那条": true,
		"刚才那个": true, "刚才的": true, "那条记忆": true, "这条记忆": true, "刚才那条记忆": true,
		"刚才的记忆": true, "记忆": true, "这件事": true, "那件事": true, "刚才说的": true, "我刚才说的": true,
	}
	zhEverything = map[string]bool{"所有": true, "所有记忆": true, "所有的记忆": true, "全部": true, "全部记忆": true,
		"一切": true, "所有的事": true, "我的所有记忆": true}
	enEverything = map[string]bool{"everything": true, "all": true, "all memories": true, "all my memories": true,
		"all of it": true, "everything about me": true, "all your memories": true}
	enThatOne = map[string]bool{
		"that": true, "it": true, "this": true, "that memory": true, "this memory": true,
		"the last memory": true, "the last one": true, "that one": true, "what i said": true,
		"what i just said": true, "about that": true, "about it": true,
	}
)

func parseForget(seg segment, w, _ string) (intent, bool) {
	if strings.HasPrefix(seg.low, "把") {
		// 把那条忘掉, 把这条记忆删掉
		for _, v := range zhForgetVerbs {
			if obj, ok := strings.CutSuffix(seg.low[len("把"):], v); ok && zhThatOne[obj] {
				return intent{kind: kForget}, true
			}
		}
	}
	if rest, ok := cutPrefix(seg, zhForgetVerbs...); ok {
		rest = trimContent(rest)
		if zhEverything[rest.low] {
			return intent{kind: kForget, everything: true}, true
		}
		if zhThatOne[rest.low] {
			return intent{kind: kForget}, true
		}
		return intent{kind: kForget, text: rest.orig}, true
	}
	if rest, ok := cutPrefix(seg, "forget ", "delete ", "remove "); ok {
		if enThatOne[strings.TrimSpace(rest.low)] || strings.TrimSpace(rest.low) == "" {
			return intent{kind: kForget}, true
		}
		if enEverything[strings.TrimSpace(rest.low)] {
			return intent{kind: kForget, everything: true}, true
		}
		if seg.low[0] != 'f' && !hasWord(w, "memory", "memories") {
			return intent{}, false // "delete the file" is not about memories
		}
		rest, _ = cutPrefix(rest, "that ", "about ", "the memory that ", "the memory ")
		return intent{kind: kForget, text: rest.orig}, true
	}
	if strings.TrimSpace(w) == "forget" {
		return intent{kind: kForget}, true
	}
	return intent{}, false
}

func parseRemember(seg segment, _, _ string) (intent, bool) {
	if rest, ok := cutPrefix(seg, "你要记住", "要记住", "记住", "记下来", "记下", "记一下", "记着", "帮我记住"); ok {
		return intent{kind: kRemember, text: trimContent(rest).orig}, true
	}
	if rest, ok := cutPrefix(seg, "记得"); ok && !hasAny(rest.low, "什么", "啥", "哪", "吗", "么") {
		return intent{kind: kRemember, text: trimContent(rest).orig}, true
	}
	if rest, ok := cutPrefix(seg, "remember that ", "remember: ", "remember, ", "remember ", "note that ",
		"make a note that ", "don't forget that ", "do not forget that ", "keep in mind that ", "memorize that ",
		"memorise that ", "memorize ", "memorise "); ok {
		if hasAny(rest.low, "what ", "anything", "everything") && !strings.Contains(seg.low, "that ") {
			return intent{}, false // "remember what I like?" is a question
		}
		return intent{kind: kRemember, text: trimContent(rest).orig}, true
	}
	if strings.TrimSpace(seg.low) == "remember" {
		return intent{kind: kRemember}, true
	}
	return intent{}, false
}

var (
	zhSearch = []string{"在网上搜索", "在网上搜", "在网上查", "上网搜索", "上网搜", "上网查", "网上搜索", "网上搜", "网上查",
		"搜索一下", "搜索", "搜一下", "搜一搜", "搜搜", "搜", "百度一下", "百度", "谷歌一下", "查一下", "查查", "查询", "查找", "查"}
	enSearch = []string{"search the web for ", "search the internet for ", "search online for ", "search for ",
		"search the web ", "search ", "look up ", "lookup ", "google ", "web search for ", "web search ",
		"find information about ", "find information on ", "find info about ", "find info on ",
		"look for information about ", "look for information on "}
)

func parseSearch(seg segment, w, _ string) (intent, bool) {
	rest, ok := cutPrefix(seg, zhSearch...)
	if !ok {
		rest, ok = cutPrefix(seg, enSearch...)
	}
	if !ok {
		if strings.TrimSpace(w) == "search" {
			return intent{kind: kSearch}, true
		}
		return intent{}, false
	}
	rest = trimContent(rest)
	if strings.HasPrefix(seg.low, "查") || strings.HasPrefix(seg.low, "look up") {
		// 查一下状态, 查一下音量: the device is asked, not the web.
		if in, ok := parseStatus(rest, rest.words(), rest.low); ok {
			return in, true
		}
		if rest.low == "音量" || rest.low == "the volume" {
			return intent{kind: kStatus, volumeOnly: true}, true
		}
	}
	return intent{kind: kSearch, text: rest.orig}, true
}

var (
	zhRecallWhat = regexp.MustCompile(`^我(最喜欢|喜欢|爱|讨厌|不喜欢|住在|住|叫|是|想|要|养了|养|有|在)(什么|啥|哪些|哪里|哪儿|谁|几)`)
	enRecallWhat = regexp.MustCompile(`^(?:what|where|who|which) (?:do|did|does) i (\w+)`)
	enRecallMy   = regexp.MustCompile(`^(?:what|who|where)(?:'s| is| are) my (.+)$`)
	// Any other question about oneself: 我明天要做什么, 我喜欢猫吗.
	zhRecallAsk = regexp.MustCompile(`^(我.{1,20}?)(?:做什么|干什么|什么|啥|哪些|哪里|哪儿|谁|几点|几|吗|么)$`)
	zhRecallMy  = regexp.MustCompile(`^我的(.+?)(?:是什么|是啥|是谁|是哪|叫什么|是多少|在哪|是几)`)
	zhRecallAll = []string{"你记得什么", "你还记得什么", "你记得我什么", "你都记得什么", "你记住了什么", "你记了什么",
		"关于我你知道什么", "你知道我什么", "你对我了解多少", "你了解我吗", "我说过什么", "我告诉过你什么", "你记得我吗",
		"你记得吗", "记得什么", "我的记忆", "有什么记忆"}
	enRecallAll = []string{"what do you remember", "what do you know about me", "what did i tell you",
		"what have i told you", "do you remember anything", "what do you remember about me", "what do you know",
		"do you remember me", "my memories", "list my memories", "show my memories"}
)

func parseRecall(seg segment, w, _ string) (intent, bool) {
	q, _ := cutPrefix(seg, "你还记得", "你记得", "还记得", "记得")
	if m := zhRecallWhat.FindStringSubmatchIndex(q.low); m != nil {
		// 我喜欢什么 searches for 我喜欢.
		return intent{kind: kRecall, text: q.orig[:m[3]]}, true
	}
	if m := zhRecallMy.FindStringSubmatchIndex(q.low); m != nil {
		return intent{kind: kRecall, text: q.orig[:m[3]]}, true // 我的名字是什么 searches for 我的名字
	}
	if m := zhRecallAsk.FindStringSubmatchIndex(q.low); m != nil {
		return intent{kind: kRecall, text: q.orig[:m[3]]}, true
	}
	for _, p := range zhRecallAll {
		if strings.HasPrefix(seg.low, p) {
			return intent{kind: kRecall}, true
		}
	}
	trimmed := strings.TrimSpace(w)
	if m := enRecallWhat.FindStringSubmatch(trimmed); m != nil && m[1] != "do" && m[1] != "mean" {
		return intent{kind: kRecall, text: "I " + m[1]}, true
	}
	if m := enRecallMy.FindStringSubmatch(trimmed); m != nil {
		return intent{kind: kRecall, text: "my " + m[1]}, true
	}
	for _, p := range enRecallAll {
		if strings.HasPrefix(trimmed, p) {
			return intent{kind: kRecall}, true
		}
	}
	return intent{}, false
}

func parseThanks(seg segment, w, _ string) (intent, bool) {
	t := strings.TrimSpace(w)
	if hasAny(seg.low, "谢谢", "多谢", "感谢") && len([]rune(seg.low)) <= 6 ||
		t == "thanks" || t == "thank you" || t == "thanks a lot" || t == "thank you very much" || t == "thx" {
		return intent{kind: kThanks}, true
	}
	return intent{}, false
}

var (
	zhVolumeQuestion = []string{"音量是多少", "音量多少", "音量多大", "音量是几", "音量几", "现在音量", "当前音量", "现在的音量",
		"当前的音量", "现在多大声", "多大声", "声音多大", "音量呢"}
	zhStatus = []string{"状态", "你好吗", "你还好吗", "你怎么样", "你现在怎么样", "你最近怎么样", "设备怎么样", "运行多久",
		"运行了多久", "开机多久", "开机了多久", "在线吗", "什么表情", "当前表情", "现在的表情", "情况怎么样", "你在吗"}
	enVolumeQuestion = []string{"what's the volume", "what is the volume", "whats the volume", "current volume",
		"how loud is it", "how loud are you", "what volume", "volume level", "the volume"}
	enStatus = []string{"status", "how are you", "how are you doing", "how's it going", "how is it going",
		"how are things", "uptime", "are you ok", "are you okay", "are you there", "what's your status",
		"report", "state", "device status", "what's your expression", "what is your expression", "health"}
)

func parseStatus(seg segment, w, _ string) (intent, bool) {
	for _, p := range zhVolumeQuestion {
		if strings.Contains(seg.low, p) && !hasAny(seg.low, "调", "设", "开到", "放到") {
			return intent{kind: kStatus, volumeOnly: true}, true
		}
	}
	t := strings.TrimSpace(w)
	for _, p := range enVolumeQuestion {
		if strings.HasPrefix(t, p) && (p != "the volume" || t == p) {
			return intent{kind: kStatus, volumeOnly: true}, true
		}
	}
	if hasAny(seg.low, zhStatus...) {
		return intent{kind: kStatus}, true
	}
	if hasWord(w, "status") {
		return intent{kind: kStatus}, true
	}
	for _, p := range enStatus {
		if t == p || strings.HasPrefix(t, p+" ") && p != "report" && p != "state" {
			return intent{kind: kStatus}, true
		}
	}
	return intent{}, false
}

var (
	reZhAbsolute  = regexp.MustCompile(`(?:调到|调成|调至|调为|调回|开到|放到|设到|设为|设成|设置为|设置成|改成|改为|变成|到|成|至|为|在|回)\s*(?:百分之)?(\d+(?:\.\d+)?)`)
	rePercent     = regexp.MustCompile(`百分之(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*%`)
	reAfterVolume = regexp.MustCompile(`(?:音量|声音|volume|sound)\s*[:=]?\s*(?:是|调|设|is|level|to|at|of)?\s*(\d+(?:\.\d+)?)`)
	reEnAbsolute  = regexp.MustCompile(`\b(?:to|at) (\d+(?:\.\d+)?)`)
	reZhStepUp    = regexp.MustCompile(`(?:调大|调高|开大|加大|提高|增加|增大|升高|放大|加|大|高)\s*(\d+)`)
	reZhStepDown  = regexp.MustCompile(`(?:调小|调低|开小|减小|降低|减少|关小|减|小|低)\s*(\d+)`)
	reEnStep      = regexp.MustCompile(`\b(?:by|up|down) (\d+)`)
	zhVolumeVerb  = []string{"调到", "调成", "调至", "调为", "调回", "开到", "放到", "设到", "设为", "设成"}
	zhUp          = []string{"大声", "大点声", "大一点声", "响一点", "响点", "调大", "调高", "开大", "加大", "提高音量", "增大", "放大声", "升高",
		"声音太小", "音量太小", "太小声", "听不见", "听不清"}
	zhUpCtx = []string{"大一点", "大点", "大些", "高一点", "高点", "大一些", "响", "加"}
	zhDown  = []string{"小声", "小点声", "小一点声", "轻一点", "轻点", "调小", "调低", "开小", "减小", "降低", "关小", "放低",
		"声音太大", "音量太大", "太大声", "太吵", "太响"}
	zhDownCtx = []string{"小一点", "小点", "小些", "低一点", "低点", "小一些", "减"}
	enUp      = []string{"louder", "turn it up", "turn up", "volume up", "increase the volume", "increase volume",
		"raise the volume", "raise volume", "crank it up", "pump it up", "speak up", "turn the volume up", "turn up the volume",
		"turn the sound up", "turn sound up", "too quiet", "can't hear you", "cannot hear you", "i can't hear"}
	enDown = []string{"quieter", "softer", "turn it down", "turn down", "volume down", "decrease the volume",
		"decrease volume", "lower the volume", "lower volume", "turn the volume down", "turn down the volume",
		"turn the sound down", "less loud", "not so loud", "too loud"}
)

// levelMax and levelMin stand for the highest and lowest level the volume tool's schema
// allows (100 and 0 for the device's own tool).
const (
	levelMax = 1 << 30
	levelMin = -(1 << 30)
)

func parseVolume(seg segment, w, num string) (intent, bool) {
	ctx := hasAny(num, "音量", "声音", "volume", "sound", "loud")
	zhVerb := hasAny(num, zhVolumeVerb...)
	up := hasAny(num, zhUp...) || hasWord(w, enUp...) || ctx && hasAny(num, zhUpCtx...)
	down := hasAny(num, zhDown...) || hasWord(w, enDown...) || ctx && hasAny(num, zhDownCtx...)
	enTurn := hasWord(w, "turn it", "set it", "make it", "put it") && (up || down || hasWord(w, "to"))

	switch {
	case hasAny(num, "取消静音", "解除静音") || hasWord(w, "unmute"):
		return intent{kind: kVolumeSet, n: 50}, true
	case hasAny(num, "静音", "关掉声音", "关闭声音", "声音关掉", "把声音关了", "关声音", "安静") ||
		hasWord(w, "mute", "mute yourself", "silence", "mute the sound", "mute the volume", "be quiet", "shut up"):
		return intent{kind: kVolumeSet, n: 0}, true
	case (ctx || zhVerb || up) && hasAny(num, "最大", "最响") || hasWord(w, "all the way up") ||
		(ctx || enTurn) && hasWord(w, "max", "maximum", "full", "the max", "the maximum"):
		return intent{kind: kVolumeSet, n: levelMax}, true
	case (ctx || zhVerb || down) && hasAny(num, "最小", "最低") || hasWord(w, "all the way down") ||
		(ctx || enTurn) && hasWord(w, "min", "minimum", "the minimum"):
		return intent{kind: kVolumeSet, n: levelMin}, true
	}
	if !ctx && !zhVerb && !up && !down && !enTurn {
		return intent{}, false
	}
	// An absolute level: 调到30, 百分之五十, 50%, volume 80, turn it down to 20.
	for _, re := range []*regexp.Regexp{rePercent, reZhAbsolute, reAfterVolume, reEnAbsolute} {
		if re == reEnAbsolute && !(ctx || enTurn) {
			continue
		}
		if m := re.FindStringSubmatch(num); m != nil {
			if n, ok := level(m[1:]); ok {
				return intent{kind: kVolumeSet, n: n}, true
			}
		}
	}
	// A change by an amount: 音量加20, 调小十, turn it up by 20, volume down 5.
	if up || down {
		if up && down {
			return intent{}, false // 大声一点还是小声一点: say it is not understood
		}
		in := intent{kind: kVolumeStep, n: 1}
		re := reZhStepUp
		if down {
			re = reZhStepDown
		}
		m := reEnStep.FindStringSubmatch(num)
		if m == nil {
			m = re.FindStringSubmatch(num)
		}
		if m != nil {
			if n, ok := level(m[1:]); ok {
				in.n, in.amount = n, true
			}
		}
		if down {
			in.n = -in.n
		}
		return in, true
	}
	if t := strings.TrimSpace(w); t == "volume" || t == "音量" || t == "声音" {
		return intent{kind: kStatus, volumeOnly: true}, true
	}
	return intent{}, false
}

// level reads the first non-empty group as a level, rounded to a whole percent (三十点五 is
// 31); numbers too long for an int are refused.
func level(groups []string) (int, bool) {
	for _, g := range groups {
		if g == "" {
			continue
		}
		if len(g) > 9 {
			return 0, false
		}
		f, err := strconv.ParseFloat(g, 64)
		return int(math.Round(f)), err == nil
	}
	return 0, false
}

// faceRules map what is said to an expression, the first match winning: negations ("别哭了")
// before the expressions they name, close_eyes_smile before close_eyes and smile.
var faceRules = []struct {
	expr string
	zh   []string
	en   []string
}{
	{"idle", []string{"恢复正常", "正常表情", "恢复表情", "表情恢复", "平静", "面无表情", "默认表情", "别笑", "不要笑", "别哭", "不要哭",
		"不哭", "中性", "还原表情", "正常点", "睁开眼", "睁眼", "表情正常"},
		[]string{"neutral", "normal face", "back to normal", "idle", "reset your face", "reset face", "stop smiling",
			"stop crying", "straight face", "default face", "calm", "don't smile", "don't cry", "open your eyes", "normal"}},
	{"close_eyes_smile", []string{"眯眼笑", "眯着眼笑", "眯眼", "闭眼笑", "闭着眼笑", "闭眼微笑", "闭着眼睛笑", "笑眯眯", "眯眯眼"},
		[]string{"squint", "smile with your eyes closed", "smile with eyes closed", "close your eyes and smile",
			"eyes closed and smile", "happy squint", "smile with closed eyes"}},
	{"close_eyes", []string{"闭眼", "闭上眼", "闭上你的眼", "闭一下眼", "合上眼", "睡觉", "睡吧", "闭着眼"},
		[]string{"close your eyes", "close eyes", "shut your eyes", "eyes closed", "go to sleep", "sleep", "close the eyes"}},
	{"amazed", []string{"惊讶", "吃惊", "震惊", "惊奇", "惊喜", "吓一跳", "哇"},
		[]string{"amazed", "surprised", "astonished", "shocked", "wow", "look amazed", "amaze"}},
	{"cry", []string{"哭", "伤心", "难过", "流泪", "掉眼泪"},
		[]string{"cry", "crying", "sad", "weep", "tears", "look sad"}},
	{"smile", []string{"笑一个", "笑一下", "笑笑", "笑一笑", "微笑", "笑起来", "给我笑", "开心", "高兴", "笑脸", "你笑", "笑吧", "笑个"},
		[]string{"smile", "smiling", "happy", "grin", "look happy", "be happy"}},
}

func parseFace(seg segment, w, _ string) (intent, bool) {
	for _, r := range faceRules {
		if hasAny(seg.low, r.zh...) || hasWord(w, r.en...) {
			return intent{kind: kFace, text: r.expr}, true
		}
	}
	if strings.TrimSpace(seg.low) == "笑" {
		return intent{kind: kFace, text: "smile"}, true
	}
	return intent{}, false
}

// mathWords are operations beyond + - * / that the calculate tool of seed 004 reads
// (powers, roots, modulo): text with a number and one of them goes to the tool as said.
var (
	zhMathWords = []string{"平方", "立方", "次方", "次幂", "根号", "开方", "取模", "的和", "的差", "的积", "的商", "√", "^", "**"}
	enMathWords = []string{"squared", "cubed", "square root", "cube root", "sqrt", "to the power of", "raised to",
		"mod", "modulo", "power"}
)

func parseCalc(seg segment, w, num string) (intent, bool) {
	if e, ok := arithmetic(num); ok {
		return intent{kind: kCalc, text: e}, true
	}
	if strings.ContainsAny(num, "0123456789") && (hasAny(num, zhMathWords...) || hasWord(w, enMathWords...)) {
		return intent{kind: kCalc, text: seg.orig}, true
	}
	return intent{}, false
}

var (
	zhHelp  = []string{"你能做什么", "你会做什么", "你会什么", "能干什么", "你能干嘛", "有什么功能", "帮助", "怎么用", "你是谁"}
	zhGreet = []string{"你好", "您好", "嗨", "哈喽", "早上好", "晚上好", "下午好", "在吗", "喂"}
	enHelp  = []string{"help", "what can you do", "what do you do", "who are you", "commands", "what can i say"}
	enGreet = []string{"hi", "hello", "hey", "good morning", "good evening", "good afternoon", "hi there", "hello there", "yo"}
)

func parseHelp(seg segment, w, _ string) (intent, bool) {
	t := strings.TrimSpace(w)
	for _, p := range zhGreet {
		if strings.HasPrefix(seg.low, p) && len(seg.low) <= len(p)+6 {
			return intent{kind: kHelp, greet: true}, true
		}
	}
	for _, p := range enGreet {
		if t == p {
			return intent{kind: kHelp, greet: true}, true
		}
	}
	// 你能做什么 arrives as 做什么: 你能 is stripped as a polite opening.
	if hasAny(seg.low, zhHelp...) || seg.low == "做什么" || seg.low == "干什么" || seg.low == "干嘛" {
		return intent{kind: kHelp}, true
	}
	for _, p := range enHelp {
		if strings.HasPrefix(t, p) {
			return intent{kind: kHelp}, true
		}
	}
	return intent{}, false
}
