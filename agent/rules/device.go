package rules

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/protocol"
)

// The device's own tools: the volume (amplify_volume, read back through get_device_status for
// a step), the face (set_virtual_human_expression) and the status (get_device_status).

func (r *turn) setVolume(level int) error {
	d, ok := r.decl[protocol.ToolVolume]
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
	res, failure, err := r.call(protocol.ToolVolume, map[string]any{"level": level})
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
	d, ok := r.decl[protocol.ToolVolume]
	if !ok {
		r.say("这台设备没有可以调的音量。", "This device has no volume control.")
		return nil
	}
	if !r.has(protocol.ToolStatus) {
		r.say("我读不到现在的音量，没法相对调整；请说一个具体的数，比如“音量调到50”。",
			"I can't read the current volume, so I can't change it by a step; say a level, like \"volume 50\".")
		return nil
	}
	res, failure, err := r.call(protocol.ToolStatus, map[string]any{})
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
	res, failure, err = r.call(protocol.ToolVolume, map[string]any{"level": next})
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
	d, ok := r.decl[protocol.ToolExpression]
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
	_, failure, err := r.call(protocol.ToolExpression, map[string]any{"expression": expr})
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
	if !r.has(protocol.ToolStatus) {
		r.say("我读不到设备的状态。", "I can't read the device's status.")
		return nil
	}
	res, failure, err := r.call(protocol.ToolStatus, map[string]any{})
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
