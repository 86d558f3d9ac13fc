package reminders

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxIn is the furthest ahead a reminder may be set.
const MaxIn = 366 * 24 * time.Hour

// Every is a repeating time: every day, or every week on one weekday, at a clock time in the
// agent's time zone.
type Every struct {
	Weekly  bool         `json:"weekly,omitempty"`
	Weekday time.Weekday `json:"weekday,omitempty"` // for Weekly: 0 Sunday .. 6 Saturday
	Hour    int          `json:"hour"`
	Minute  int          `json:"minute"`
}

// Check reports a clock time or weekday out of range.
func (e Every) Check() error {
	switch {
	case e.Hour < 0 || e.Hour > 23:
		return fmt.Errorf("hour %d is not 0..23", e.Hour)
	case e.Minute < 0 || e.Minute > 59:
		return fmt.Errorf("minute %d is not 0..59", e.Minute)
	case e.Weekday < time.Sunday || e.Weekday > time.Saturday:
		return fmt.Errorf("weekday %d is not 0 (Sunday) .. 6 (Saturday)", e.Weekday)
	}
	return nil
}

// Next returns the first occurrence strictly after t, in loc. Days are counted on the calendar,
// not in 24-hour steps, so 08:00 stays 08:00 across a daylight-saving change; a clock time that
// a spring-forward skips (02:30) is taken as far past the gap (03:30), and one a fall-back
// repeats is taken the first time.
func (e Every) Next(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	y, m, d := lt.Date()
	for i := 0; ; i++ {
		c := time.Date(y, m, d+i, e.Hour, e.Minute, 0, 0, loc)
		if !c.After(t) {
			continue
		}
		if e.Weekly && c.Weekday() != e.Weekday {
			continue
		}
		if c.Hour() != e.Hour || c.Minute() != e.Minute {
			// The clock time does not exist that day (a spring-forward skips it) and time.Date
			// went back before the gap: take it as far past the gap instead.
			c = c.Add(time.Duration((e.Hour-c.Hour())*60+e.Minute-c.Minute()) * time.Minute)
			if gap := c.Sub(time.Date(y, m, d+i, 0, 0, 0, 0, loc)); gap <= 0 || !c.After(t) {
				continue
			}
		}
		return c
	}
}

// String says it in English, e.g. "every day at 08:00", "every Monday at 09:00".
func (e Every) String() string {
	if e.Weekly {
		return fmt.Sprintf("every %s at %02d:%02d", e.Weekday, e.Hour, e.Minute)
	}
	return fmt.Sprintf("every day at %02d:%02d", e.Hour, e.Minute)
}

// Chinese says it in Chinese, e.g. "每天08:00", "每周一09:00".
func (e Every) Chinese() string {
	if e.Weekly {
		return fmt.Sprintf("每周%s%02d:%02d", weekdayZH[e.Weekday], e.Hour, e.Minute)
	}
	return fmt.Sprintf("每天%02d:%02d", e.Hour, e.Minute)
}

var weekdayZH = [...]string{"日", "一", "二", "三", "四", "五", "六"}

// ParseIn reads a relative time as a model or a person writes it: a Go duration ("10m",
// "1h30m") or an ISO 8601 duration ("PT10M", "P1DT2H", "P2W"). It must be positive and at most
// MaxIn.
func ParseIn(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	if strings.HasPrefix(strings.ToUpper(s), "P") {
		d, err = parseISODuration(strings.ToUpper(s))
	} else {
		d, err = time.ParseDuration(s)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("in %q is not a duration like 10m, 1h30m or PT10M", s)
	case d <= 0:
		return 0, fmt.Errorf("in %q is not in the future", s)
	case d > MaxIn:
		return 0, fmt.Errorf("in %q is further than a year ahead", s)
	}
	return d, nil
}

// parseISODuration reads PnW, PnD, PTnHnMnS and their combinations (no years or months: their
// length depends on the calendar, and a reminder that far is set with at).
func parseISODuration(s string) (time.Duration, error) {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return 0, errors.New("no P")
	}
	var total time.Duration
	inTime := false
	units := map[bool]map[byte]time.Duration{
		false: {'W': 7 * 24 * time.Hour, 'D': 24 * time.Hour},
		true:  {'H': time.Hour, 'M': time.Minute, 'S': time.Second},
	}
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return 0, errors.New("two Ts")
			}
			inTime, rest = true, rest[1:]
			if rest == "" {
				return 0, errors.New("nothing after T")
			}
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, errors.New("a number without a unit")
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n > 1e6 {
			return 0, errors.New("bad number")
		}
		unit, ok := units[inTime][rest[i]]
		if !ok {
			return 0, fmt.Errorf("unit %c", rest[i])
		}
		total += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	return total, nil
}

// ParseAt reads an absolute time in ISO 8601: with an offset ("2026-11-26T08:00:00+08:00",
// "...Z") it is that instant; without one ("2026-11-26T08:00", "2026-11-26 08:00") it is a clock
// time in loc.
func ParseAt(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("at %q is not an ISO 8601 time like 2026-11-26T08:00 or 2026-11-26T08:00:00+08:00", s)
}

// everyJSON is Every as the tools take it from a model: {"days":"daily"} or {"weekday":"monday"},
// with "time":"08:00".
type everyJSON struct {
	Repeat  string `json:"repeat" jsonschema:"daily or weekly" tool:"enum=daily|weekly"`
	Weekday string `json:"weekday,omitempty" jsonschema:"for weekly: monday, tuesday, ... sunday"`
	Time    string `json:"time" jsonschema:"the clock time, 24-hour HH:MM, e.g. 08:00 or 22:00"`
}

func (j everyJSON) every() (Every, error) {
	var e Every
	switch strings.ToLower(j.Repeat) {
	case "daily", "day", "every day":
	case "weekly", "week":
		e.Weekly = true
		wd, ok := weekdays[strings.ToLower(strings.TrimSpace(j.Weekday))]
		if !ok {
			return e, fmt.Errorf("every.weekday %q is not a day of the week (monday ... sunday)", j.Weekday)
		}
		e.Weekday = wd
	default:
		return e, fmt.Errorf("every.repeat %q is not daily or weekly", j.Repeat)
	}
	hm, err := time.Parse("15:04", strings.TrimSpace(j.Time))
	if err != nil {
		return e, fmt.Errorf("every.time %q is not a 24-hour HH:MM time", j.Time)
	}
	e.Hour, e.Minute = hm.Hour(), hm.Minute()
	return e, e.Check()
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

func (e Every) marshal() string {
	b, _ := json.Marshal(e)
	return string(b)
}
