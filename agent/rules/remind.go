package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/devicectl/devicectl/agent/reminders"
)

var (
	reZhRemindVerb = regexp.MustCompile(`(?:提醒一下我|提醒我|提醒下我|叫我|喊我|记得提醒我)`)
	reZhList       = regexp.MustCompile(`(?:我|我的)?(?:有|还有)?(?:哪些|什么|几个|多少)(?:个)?(?:提醒|闹钟|计时)|(?:查看|看看|列出|我的)(?:所有)?(?:提醒|计时)|^提醒列表$`)
	reZhCancel     = regexp.MustCompile(`^(?:取消|删除|删掉|不用)(?:掉)?(.*?)(?:的)?(提醒|计时器?|倒计时|闹钟)(?:了)?$`)
	reEnRemind     = regexp.MustCompile(`\bremind\s+me\b(?:\s+(?:to|about|that))?`)
	reEnList       = regexp.MustCompile(`\b(?:what|which|any)\s+(?:reminders|timers)\b|\b(?:list|show)\s+(?:me\s+)?(?:all\s+)?(?:my\s+)?(?:reminders|timers)\b|^my\s+reminders$|\bdo\s+i\s+have\s+any\s+reminders\b`)
	reEnCancel     = regexp.MustCompile(`^(?:cancel|delete|remove|stop)\s+(?:(all|all\s+my|all\s+of\s+my|every|my|the)\s+)?(?:(.+?)\s+)?(reminders?|timers?)(?:\s+(?:to|about|for)\s+(.+))?$`)
)

// parseRemind reads a reminder, a timer, a list or a cancel of them.
func parseRemind(seg segment, _ string, _ string) (intent, bool) {
	if isChinese(seg.orig) {
		return parseRemindZh(seg.orig)
	}
	return parseRemindEn(seg.low)
}

// zhRemindWords are the words of which every Chinese reminder, timer, list or cancel of them has
// one (each pattern of parseRemindZh needs one): most of what is said has none, and is no
// reminder without running the patterns, which take longer than the rest of the planner.
var zhRemindWords = []string{"提醒", "计时", "闹钟", "定", "设", "叫我", "喊我"}

func parseRemindZh(s string) (intent, bool) {
	if !slices.ContainsFunc(zhRemindWords, func(w string) bool { return strings.Contains(s, w) }) {
		return intent{}, false
	}
	if m := reZhCancel.FindStringSubmatch(s); m != nil {
		what := strings.TrimSpace(m[1])
		if what == "所有" || what == "全部" || what == "所有的" || what == "全部的" {
			return intent{kind: kCancelReminder, everything: true}, true
		}
		if what == "" && strings.Contains(m[2], "计时") {
			what = "计时"
		}
		return intent{kind: kCancelReminder, text: what}, true
	}
	if reZhList.MatchString(s) {
		return intent{kind: kListReminders}, true
	}
	d := fixClock(digitizeZh(s))
	if m := reZhTimer.FindStringSubmatch(d); m != nil && !reZhRemindVerb.MatchString(d) {
		amount := m[1] + m[2]
		if dur := zhDuration(amount); dur > 0 {
			return intent{kind: kTimer, when: when{in: dur}}, true
		}
	}
	loc := reZhRemindVerb.FindStringIndex(d)
	if loc == nil {
		return intent{}, false
	}
	w, rest := parseWhenZh(d)
	if !w.set() {
		return intent{kind: kRemind}, true // a reminder without a time: the reply asks for one
	}
	// What to be reminded of follows the verb; the time may come before or after it.
	if l := reZhRemindVerb.FindStringIndex(rest); l != nil {
		after := trimEnds(rest[l[1]:])
		before := trimEnds(rest[:l[0]])
		rest = after
		if rest == "" {
			rest = before
		}
	}
	return intent{kind: kRemind, when: w, text: strings.TrimSpace(strings.TrimPrefix(rest, "去"))}, true
}

// fixClock undoes what reading numbers does to times: 三点五分 became 3.5分; 两点 was left as
// 两点, and 一个小时 as 一个小时 (一 and 两 as "a").
func fixClock(s string) string {
	s = strings.ReplaceAll(s, "两点", "2点")
	s = reOneUnit.ReplaceAllString(s, "1个$1")
	return reDecimalMinute.ReplaceAllString(s, "${1}点${2}分")
}

var (
	reDecimalMinute = regexp.MustCompile(`(\d{1,2})\.(\d{1,2})分`)
	reOneUnit       = regexp.MustCompile(`一个(半?(?:小时|钟头))`)
)

func parseRemindEn(low string) (intent, bool) {
	s := digitizeEn(strings.TrimSpace(low))
	if m := reEnCancel.FindStringSubmatch(s); m != nil {
		all := strings.HasPrefix(m[1], "all") || m[1] == "every"
		what := strings.TrimSpace(m[2] + " " + m[4])
		if what == "" && strings.HasPrefix(m[3], "timer") && !all {
			what = "timer"
		}
		if all && what == "" {
			return intent{kind: kCancelReminder, everything: true}, true
		}
		return intent{kind: kCancelReminder, text: what}, true
	}
	if reEnList.MatchString(s) {
		return intent{kind: kListReminders}, true
	}
	if m := reEnTimer.FindStringSubmatch(s); m != nil && !reEnRemind.MatchString(s) {
		if dur := enDuration(m[1] + m[2]); dur > 0 {
			return intent{kind: kTimer, when: when{in: dur}}, true
		}
	}
	if !reEnRemind.MatchString(s) {
		return intent{}, false
	}
	w, rest := parseWhenEn(s)
	if !w.set() {
		return intent{kind: kRemind}, true
	}
	if l := reEnRemind.FindStringIndex(rest); l != nil {
		rest = strings.TrimSpace(rest[l[1]:])
	}
	rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "to "))
	return intent{kind: kRemind, when: w, text: trimEnds(rest)}, true
}

// setResult is what set_reminder answers, as far as the reply needs it.
type setResult struct {
	ID    string `json:"id"`
	Due   string `json:"due"`
	Every string `json:"every"`
}

// reminderInput is set_reminder's input for w, said at now.
func (r *turn) reminderInput(w when, text string, now time.Time) map[string]any {
	in := map[string]any{"user_id": r.userID()}
	if text != "" {
		in["text"] = text
	}
	switch {
	case w.in > 0:
		in["in"] = w.in.String()
	case w.every:
		h, _ := w.hour24()
		every := map[string]any{"repeat": "daily", "time": fmt.Sprintf("%02d:%02d", h, w.minute)}
		if w.onDay {
			every["repeat"], every["weekday"] = "weekly", strings.ToLower(w.weekday.String())
		}
		in["every"] = every
	default:
		in["at"] = w.at(now).Format("2006-01-02T15:04")
	}
	return in
}

func (r *turn) now() time.Time {
	now := time.Now
	if r.p.opts.Now != nil {
		now = r.p.opts.Now
	}
	loc := r.p.opts.Location
	if loc == nil {
		loc = time.Local
	}
	return now().In(loc)
}

func (r *turn) remind(in intent) error {
	if !r.has(reminders.ToolSet) {
		r.say("我现在不能设提醒。", "I can't set reminders right now.")
		return nil
	}
	timer := in.kind == kTimer
	if !timer && !in.when.set() {
		r.say("什么时候提醒你？比如“10分钟后提醒我喝水”“明天早上8点提醒我开会”。",
			`When should I remind you? For example "remind me in 10 minutes to drink water" or "remind me at 7pm to call mom".`)
		return nil
	}
	if !timer && in.text == "" {
		r.say("提醒你什么呢？比如“10分钟后提醒我喝水”。", `Remind you of what? For example "remind me in 10 minutes to stretch".`)
		return nil
	}
	now := r.now()
	res, failure, err := r.call(reminders.ToolSet, r.reminderInput(in.when, in.text, now))
	if err != nil {
		return err
	}
	if failure != nil {
		r.failed("设提醒", "set the reminder", failure)
		return nil
	}
	var set setResult
	json.Unmarshal(res, &set)
	due, perr := time.Parse(time.RFC3339, set.Due)
	if perr != nil {
		r.say("好的，提醒设好了。", "OK, the reminder is set.")
		return nil
	}
	due = due.In(now.Location())
	clock := due.Format("15:04")
	switch {
	case timer:
		r.say(fmt.Sprintf("好的，开始计时%s，%s到时叫你。", reminders.SpanZH(in.when.in), clock),
			fmt.Sprintf("OK, a timer for %s is running: I'll tell you at %s.", reminders.SpanEN(in.when.in), clock))
	case in.when.in > 0:
		r.say(fmt.Sprintf("好的，%s后（%s）提醒你%s。", reminders.SpanZH(in.when.in), clock, youZh(in.text)),
			fmt.Sprintf("OK, I'll remind you to %s in %s (%s).", youEn(in.text), reminders.SpanEN(in.when.in), clock))
	case in.when.every:
		zhEvery, enEvery := "每天", "every day"
		if in.when.onDay {
			zhEvery, enEvery = "每周"+zhWeekdayName[due.Weekday()], "every "+due.Weekday().String()
		}
		r.say(fmt.Sprintf("好的，%s%s提醒你%s。", zhEvery, clock, youZh(in.text)),
			fmt.Sprintf("OK, I'll remind you to %s %s at %s.", youEn(in.text), enEvery, clock))
	default:
		r.say(fmt.Sprintf("好的，%s%s提醒你%s。", zhDay(due, now), clock, youZh(in.text)),
			fmt.Sprintf("OK, I'll remind you to %s %s at %s.", youEn(in.text), enDay(due, now), clock))
	}
	return nil
}

// listed is one reminder as list_reminders answers it.
type listedReminder struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Timer bool   `json:"timer"`
	Due   string `json:"due"`
	Every string `json:"every"`
}

// reminders lists the user's reminders through list_reminders; ok is false when the reply has
// already said why there are none to show.
func (r *turn) reminders(zhWhat, enWhat string) (list []listedReminder, ok bool, fatal error) {
	if !r.has(reminders.ToolList) {
		r.say("我现在查不了提醒。", "I can't look at reminders right now.")
		return nil, false, nil
	}
	res, failure, err := r.call(reminders.ToolList, map[string]any{"user_id": r.userID()})
	if err != nil {
		return nil, false, err
	}
	if failure != nil {
		r.failed(zhWhat, enWhat, failure)
		return nil, false, nil
	}
	if err := json.Unmarshal(res, &list); err != nil {
		r.say("提醒工具回答了："+clip(string(res), 200)+"。", "The reminder tool answered: "+clip(string(res), 200)+".")
		return nil, false, nil
	}
	return list, true, nil
}

func (r *turn) listReminders() error {
	list, ok, err := r.reminders("查看提醒", "list the reminders")
	if err != nil || !ok {
		return err
	}
	if len(list) == 0 {
		r.say("你现在没有提醒。", "You have no reminders.")
		return nil
	}
	now := r.now()
	zh := make([]string, len(list))
	en := make([]string, len(list))
	for i, l := range list {
		due, _ := time.Parse(time.RFC3339, l.Due)
		due = due.In(now.Location())
		what, whatEn := l.Text, l.Text
		if l.Timer && l.Text == "" {
			what, whatEn = "计时结束", "a timer ends"
		}
		when, whenEn := zhDay(due, now)+due.Format("15:04"), enDay(due, now)+" at "+due.Format("15:04")
		if l.Every != "" {
			when, whenEn = l.Every, l.Every
			if e, ok := everyZh(l.Every); ok {
				when = e
			}
		}
		zh[i] = when + " " + what
		en[i] = whatEn + " " + whenEn
	}
	r.say(fmt.Sprintf("你有%d个提醒：%s。", len(list), strings.Join(zh, "；")),
		fmt.Sprintf("You have %d reminder%s: %s.", len(list), plural(len(list)), strings.Join(en, "; ")))
	return nil
}

func (r *turn) cancelReminders(in intent) error {
	if !r.has(reminders.ToolCancel) {
		r.say("我现在不能取消提醒。", "I can't cancel reminders right now.")
		return nil
	}
	list, ok, err := r.reminders("取消提醒", "cancel the reminder")
	if err != nil || !ok {
		return err
	}
	var pick []listedReminder
	match := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(in.text, "the ")))
	timer := match == "timer" || match == "计时" || strings.Contains(match, "计时")
	for _, l := range list {
		switch {
		case in.everything, match == "" && len(list) == 1:
			pick = append(pick, l)
		case timer && l.Timer:
			pick = append(pick, l)
		case match != "" && l.Text != "" && (strings.Contains(strings.ToLower(l.Text), match) || strings.Contains(match, strings.ToLower(l.Text))):
			pick = append(pick, l)
		}
	}
	switch {
	case len(list) == 0:
		r.say("你现在没有提醒。", "You have no reminders.")
		return nil
	case len(pick) == 0 && timer:
		r.say("你现在没有计时。", "You have no timers.")
		return nil
	case len(pick) == 0 && match == "":
		r.say(fmt.Sprintf("你有%d个提醒，要取消哪一个？比如“取消喝水的提醒”，或者“取消所有提醒”。", len(list)),
			fmt.Sprintf(`You have %d reminders: which one? For example "cancel the stretch reminder", or "cancel all reminders".`, len(list)))
		return nil
	case len(pick) == 0:
		r.say("没有找到关于“"+clip(in.text, 40)+"”的提醒。", "I found no reminder about \""+clip(in.text, 40)+"\".")
		return nil
	}
	var names, namesEn []string
	for _, l := range pick {
		res, failure, err := r.call(reminders.ToolCancel, map[string]any{"id": l.ID, "user_id": r.userID()})
		if err != nil {
			return err
		}
		if failure != nil {
			r.failed("取消提醒", "cancel the reminder", failure)
			return nil
		}
		if string(res) == "true" {
			name, nameEn := l.Text, l.Text
			if name == "" {
				name, nameEn = "计时", "timer"
			}
			names, namesEn = append(names, name), append(namesEn, nameEn)
		}
	}
	if in.everything {
		r.say(fmt.Sprintf("好的，已取消所有提醒（%d个）。", len(names)), fmt.Sprintf("OK, I canceled all %d reminder%s.", len(names), plural(len(names))))
		return nil
	}
	if timer {
		r.say(fmt.Sprintf("好的，已取消%d个计时。", len(names)), fmt.Sprintf("OK, I canceled %d timer%s.", len(names), plural(len(names))))
		return nil
	}
	r.say("好的，已取消"+strings.Join(names, "、")+"的提醒。", "OK, I canceled the "+strings.Join(namesEn, ", ")+" reminder"+plural(len(namesEn))+".")
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

var zhWeekdayName = [...]string{"日", "一", "二", "三", "四", "五", "六"}

// zhDay names due's day as seen from now: 今天, 明天, 后天, 周一 (within a week), or 11月30日.
func zhDay(due, now time.Time) string {
	switch days := dayDiff(due, now); {
	case days == 0:
		return "今天"
	case days == 1:
		return "明天"
	case days == 2:
		return "后天"
	case days < 7:
		return "周" + zhWeekdayName[due.Weekday()]
	}
	return fmt.Sprintf("%d月%d日", due.Month(), due.Day())
}

func enDay(due, now time.Time) string {
	switch days := dayDiff(due, now); {
	case days == 0:
		return "today"
	case days == 1:
		return "tomorrow"
	case days < 7:
		return "on " + due.Weekday().String()
	}
	return "on " + due.Format("January 2")
}

// dayDiff counts calendar days from now's to due's, in now's zone.
func dayDiff(due, now time.Time) int {
	y1, m1, d1 := now.Date()
	y2, m2, d2 := due.In(now.Location()).Date()
	a := time.Date(y1, m1, d1, 12, 0, 0, 0, time.UTC)
	b := time.Date(y2, m2, d2, 12, 0, 0, 0, time.UTC)
	return int(b.Sub(a).Hours() / 24)
}

// youZh and youEn turn what the person said of themself into what the reply says to them.
func youZh(s string) string { return strings.ReplaceAll(s, "我", "你") }

var reMy = regexp.MustCompile(`\b(my|me|i|i'm|myself)\b`)

func youEn(s string) string {
	return reMy.ReplaceAllStringFunc(s, func(w string) string {
		return map[string]string{"my": "your", "me": "you", "i": "you", "i'm": "you're", "myself": "yourself"}[w]
	})
}

// everyZh turns list_reminders' "every day at 08:00" / "every Monday at 09:00" into Chinese.
func everyZh(s string) (string, bool) {
	var day, clock string
	if _, err := fmt.Sscanf(s, "every %s at %s", &day, &clock); err != nil {
		return "", false
	}
	if day == "day" {
		return "每天" + clock, true
	}
	for i, name := range []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"} {
		if day == name {
			return "每周" + zhWeekdayName[i] + clock, true
		}
	}
	return "", false
}
