package rules

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// when is a time a person said for a reminder: after a while (in), at a clock time on a day,
// or every day or week at a clock time.
type when struct {
	in       time.Duration
	clock    bool // hour and minute were said
	hour     int
	minute   int
	period   period
	dayOff   int  // days from today, when day is set: 0 today, 1 tomorrow, 2 the day after
	day      bool // a day was said (今天, 明天, tomorrow)
	weekday  time.Weekday
	onDay    bool // a weekday was said (周一, on monday)
	every    bool // repeats: daily, or weekly on weekday when onDay
	nextWeek bool // 下周一: the weekday of next week
}

// period is the part of the day said with a clock time, which decides 8点 from 20点.
type period uint8

const (
	periodNone    period = iota
	periodMorning        // 早上 上午 凌晨 am
	periodNoon           // 中午 noon
	periodEvening        // 下午 傍晚 晚上 夜里 pm tonight
)

// set reports whether anything was said of when.
func (w when) set() bool { return w.in > 0 || w.clock || w.every }

// The Chinese forms, read after digitizeZh: 10分钟后 半小时后 1个半小时后 2小时30分钟后.
var (
	zhUnit     = `(?:小时|钟头|分钟|分|秒钟|秒|天)`
	zhAmount   = `(?:(?:\d+(?:\.\d+)?|半)个?半?` + zhUnit + `){1,3}`
	reZhIn     = regexp.MustCompile(`(` + zhAmount + `)(?:之后|以后|后)`)
	reZhPart   = regexp.MustCompile(`(\d+(?:\.\d+)?|半)个?(半)?(小时|钟头|分钟|分|秒钟|秒|天)`)
	reZhTimer  = regexp.MustCompile(`(?:倒计时|计时|定时|定个?|设个?)(` + zhAmount + `)|(` + zhAmount + `)的?(?:倒计时|计时器?|定时器?)`)
	reZhEvery  = regexp.MustCompile(`每(?:天|日|晚)|每个?(?:周|星期|礼拜)([1-7一二三四五六日天])`)
	reZhDay    = regexp.MustCompile(`(大后天|后天|明天|明早|明晚|今天|今晚|(下个?)?(?:周|星期|礼拜)([1-7一二三四五六日天]))`)
	reZhPeriod = regexp.MustCompile(`(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜)`)
	reZhClock  = regexp.MustCompile(`(\d{1,2})(?:点钟?|[:：](\d{2})|\.(\d{1,2})分)(?:(\d{1,2})分?|(半)|(一刻)|(三刻))?`)
)

// The English forms, read after digitizeEn on the lower-cased text.
var (
	enUnit    = `(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|days?)`
	enAmount  = `(?:(?:\d+(?:\.\d+)?|an?|half an?)\s*-?\s*` + enUnit + `(?:\s*(?:and\s+)?(?:a half)?)?(?:\s+(?:and\s+)?\d+\s*` + enUnit + `)?)`
	reEnIn    = regexp.MustCompile(`\bin\s+(` + enAmount + `)`)
	reEnPart  = regexp.MustCompile(`(\d+(?:\.\d+)?|half an?|an?)\s*-?\s*(hours?|hrs?|minutes?|mins?|seconds?|secs?|days?)(\s+and a half)?`)
	reEnTimer = regexp.MustCompile(`\btimer\s+(?:for\s+)?(` + enAmount + `)|\b(` + enAmount + `)\s+timer\b`)
	reEnEvery = regexp.MustCompile(`\b(?:every\s*day|daily|every\s+(morning|evening|night)|every\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:every\s+week|weekly)\s+on\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b`)
	reEnDay   = regexp.MustCompile(`\b(today|tonight|tomorrow|(?:on\s+|next\s+)(monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b`)
	reEnClock = regexp.MustCompile(`\bat\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|o'?clock)?|\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)|\bat\s+(noon|midnight)`)
)

var zhWeekdays = map[string]time.Weekday{"1": time.Monday, "2": time.Tuesday, "3": time.Wednesday, "4": time.Thursday, "5": time.Friday, "6": time.Saturday,
	"7": time.Sunday, "一": time.Monday, "二": time.Tuesday, "三": time.Wednesday, "四": time.Thursday, "五": time.Friday, "六": time.Saturday, "日": time.Sunday, "天": time.Sunday}

var enWeekdays = map[string]time.Weekday{"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday}

// zhDuration reads 10分钟, 半小时, 1个半小时, 2小时30分钟.
func zhDuration(s string) time.Duration {
	var d time.Duration
	for _, m := range reZhPart.FindAllStringSubmatch(s, -1) {
		n := 0.5
		if m[1] != "半" {
			n, _ = strconv.ParseFloat(m[1], 64)
		}
		if m[2] != "" {
			n += 0.5
		}
		d += time.Duration(n * float64(zhUnitOf(m[3])))
	}
	return d
}

func zhUnitOf(u string) time.Duration {
	switch u {
	case "小时", "钟头":
		return time.Hour
	case "分钟", "分":
		return time.Minute
	case "天":
		return 24 * time.Hour
	}
	return time.Second
}

// enDuration reads "5 minutes", "an hour", "half an hour", "2 hours and 30 minutes", "an hour and a half".
func enDuration(s string) time.Duration {
	var d time.Duration
	for _, m := range reEnPart.FindAllStringSubmatch(s, -1) {
		var n float64
		switch {
		case strings.HasPrefix(m[1], "half"):
			n = 0.5
		case m[1] == "a" || m[1] == "an":
			n = 1
		default:
			n, _ = strconv.ParseFloat(m[1], 64)
		}
		if m[3] != "" {
			n += 0.5
		}
		var unit time.Duration
		switch {
		case strings.HasPrefix(m[2], "h"):
			unit = time.Hour
		case strings.HasPrefix(m[2], "m"):
			unit = time.Minute
		case strings.HasPrefix(m[2], "d"):
			unit = 24 * time.Hour
		default:
			unit = time.Second
		}
		d += time.Duration(n * float64(unit))
	}
	return d
}

// cutMatch removes the match loc from s, leaving a space where it was.
func cutMatch(s string, loc []int) string {
	return strings.TrimSpace(s[:loc[0]] + " " + s[loc[1]:])
}

// parseWhenZh reads the time of a Chinese reminder from s (digitized), and returns s without it.
func parseWhenZh(s string) (when, string) {
	var w when
	if loc := reZhIn.FindStringSubmatchIndex(s); loc != nil {
		w.in = zhDuration(s[loc[2]:loc[3]])
		return w, cutMatch(s, loc)
	}
	if loc := reZhEvery.FindStringSubmatchIndex(s); loc != nil {
		w.every = true
		if m := s[loc[0]:loc[1]]; m == "每晚" {
			w.period = periodEvening
		}
		if loc[2] >= 0 {
			w.onDay, w.weekday = true, zhWeekdays[s[loc[2]:loc[3]]]
		}
		s = cutMatch(s, loc)
	} else if loc := reZhDay.FindStringSubmatchIndex(s); loc != nil {
		switch d := s[loc[2]:loc[3]]; d {
		case "今天":
			w.day = true
		case "今晚":
			w.day, w.period = true, periodEvening
		case "明天":
			w.day, w.dayOff = true, 1
		case "明早":
			w.day, w.dayOff, w.period = true, 1, periodMorning
		case "明晚":
			w.day, w.dayOff, w.period = true, 1, periodEvening
		case "后天":
			w.day, w.dayOff = true, 2
		case "大后天":
			w.day, w.dayOff = true, 3
		default:
			w.onDay, w.weekday = true, zhWeekdays[s[loc[6]:loc[7]]]
			w.nextWeek = loc[4] >= 0
		}
		s = cutMatch(s, loc)
	}
	if loc := reZhPeriod.FindStringSubmatchIndex(s); loc != nil {
		switch s[loc[2]:loc[3]] {
		case "凌晨", "早上", "早晨", "上午", "半夜":
			w.period = periodMorning
		case "中午":
			w.period = periodNoon
		default:
			w.period = periodEvening
		}
		s = cutMatch(s, loc)
	}
	if m := reZhClock.FindStringSubmatchIndex(s); m != nil {
		w.clock = true
		w.hour, _ = strconv.Atoi(s[m[2]:m[3]])
		for _, g := range []int{4, 6, 8} { // 8:30, 8.30分 (a decimal digitizeZh made of 8点30分), 8点30分
			if m[g] >= 0 {
				w.minute, _ = strconv.Atoi(s[m[g]:m[g+1]])
			}
		}
		switch {
		case m[10] >= 0:
			w.minute = 30
		case m[12] >= 0:
			w.minute = 15
		case m[14] >= 0:
			w.minute = 45
		}
		s = cutMatch(s, m)
	}
	if w.every && !w.clock {
		return when{}, s // every day, but at what time: not understood
	}
	if w.hour > 24 || w.minute > 59 {
		return when{}, s
	}
	return w, s
}

// parseWhenEn reads the time of an English reminder from s (lower case, digitized), and
// returns s without it.
func parseWhenEn(s string) (when, string) {
	var w when
	if loc := reEnIn.FindStringSubmatchIndex(s); loc != nil {
		if d := enDuration(s[loc[2]:loc[3]]); d > 0 {
			w.in = d
			return w, cutMatch(s, loc)
		}
	}
	if loc := reEnEvery.FindStringSubmatchIndex(s); loc != nil {
		w.every = true
		switch {
		case loc[2] >= 0:
			if s[loc[2]:loc[3]] == "morning" {
				w.period = periodMorning
			} else {
				w.period = periodEvening
			}
		case loc[4] >= 0:
			w.onDay, w.weekday = true, enWeekdays[s[loc[4]:loc[5]]]
		case loc[6] >= 0:
			w.onDay, w.weekday = true, enWeekdays[s[loc[6]:loc[7]]]
		}
		s = cutMatch(s, loc)
	} else if loc := reEnDay.FindStringSubmatchIndex(s); loc != nil {
		switch d := s[loc[2]:loc[3]]; d {
		case "today":
			w.day = true
		case "tonight":
			w.day, w.period = true, periodEvening
		case "tomorrow":
			w.day, w.dayOff = true, 1
		default:
			w.onDay, w.weekday = true, enWeekdays[s[loc[4]:loc[5]]]
			w.nextWeek = strings.HasPrefix(d, "next")
		}
		s = cutMatch(s, loc)
	}
	if m := reEnClock.FindStringSubmatchIndex(s); m != nil {
		w.clock = true
		h, mi, ap := 2, 4, 6
		if m[2] < 0 {
			h, mi, ap = 8, 10, 12
		}
		if m[14] >= 0 { // noon, midnight
			w.period = periodNoon
			if s[m[14]:m[15]] == "midnight" {
				w.hour, w.period = 0, periodMorning
			} else {
				w.hour = 12
			}
		} else {
			w.hour, _ = strconv.Atoi(s[m[h]:m[h+1]])
			if m[mi] >= 0 {
				w.minute, _ = strconv.Atoi(s[m[mi]:m[mi+1]])
			}
			if m[ap] >= 0 {
				switch s[m[ap]] {
				case 'a':
					w.period = periodMorning
				case 'p':
					w.period = periodEvening
				}
			}
		}
		s = cutMatch(s, m)
	}
	if w.every && !w.clock {
		return when{}, s
	}
	if w.hour > 24 || w.minute > 59 {
		return when{}, s
	}
	return w, s
}

// hour24 is the clock time in 24 hours, as the period says; ambiguous is true for a bare 1..11
// with no period, which could be either half of the day.
func (w when) hour24() (h int, ambiguous bool) {
	h = w.hour
	switch w.period {
	case periodEvening:
		if h < 12 {
			h += 12
		}
	case periodNoon:
		if h < 6 {
			h += 12
		}
	case periodMorning:
		if h == 12 {
			h = 0
		}
	default:
		return h % 24, h >= 1 && h <= 11
	}
	return h % 24, false
}

// at returns the instant a one-off clock time means, said at now: on the day said, else the next
// time the clock shows it (a bare 3点 at 14:00 is 15:00, not 03:00 tomorrow).
func (w when) at(now time.Time) time.Time {
	h, ambiguous := w.hour24()
	y, m, d := now.Date()
	loc := now.Location()
	switch {
	case w.day:
		t := time.Date(y, m, d+w.dayOff, h, w.minute, 0, 0, loc)
		if ambiguous && w.dayOff == 0 && !t.After(now) {
			t = t.Add(12 * time.Hour) // 今天3点 said at 14:00: 15:00
		}
		return t
	case w.onDay:
		days := (int(w.weekday) - int(now.Weekday()) + 7) % 7
		if w.nextWeek && days == 0 {
			days = 7
		} else if w.nextWeek {
			days += 7 * boolInt(int(w.weekday) > int(now.Weekday()) && now.Weekday() != time.Sunday)
		}
		t := time.Date(y, m, d+days, h, w.minute, 0, 0, loc)
		if !t.After(now) {
			t = time.Date(y, m, d+days+7, h, w.minute, 0, 0, loc)
		}
		return t
	}
	for i := 0; ; i++ { // today or tomorrow, whichever half of the day comes first
		for _, hh := range []int{h, h + 12} {
			if hh != h && !ambiguous {
				continue
			}
			if t := time.Date(y, m, d+i, hh, w.minute, 0, 0, loc); t.After(now) {
				return t
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
