package rules

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent/reminders"
	agentstore "github.com/devicectl/devicectl/agent/store"
)

// remindWorld is realWorld with the reminder tools over SQLite, in Shanghai on Thursday
// 2026-11-26 at 14:22, with one device registered.
func remindWorld(t *testing.T) (*world, *Planner, *reminders.Store) {
	t.Helper()
	w := realWorld(t, nil)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 11, 26, 14, 22, 0, 0, shanghai) }
	db, err := agentstore.Open(context.Background(), filepath.Join(t.TempDir(), "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store, err := reminders.OpenStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := reminders.NewScheduler(&reminders.SchedulerOptions{Store: store, Devices: noDevices{}, Location: shanghai})
	if err != nil {
		t.Fatal(err)
	}
	err = reminders.RegisterTools(w.reg, &reminders.ToolOptions{Scheduler: sched, Store: store,
		Devices: func() []string { return []string{"AA-BB-CC-DD-EE-FF"} },
		Say:     func(string, string) error { return nil }, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return w, New(&Options{Location: shanghai, Now: now}), store
}

type noDevices struct{}

func (noDevices) Say(string, string) error { return nil }
func (noDevices) Online(string) bool       { return false }

// Every phrase the grammar documents, and variants of each, in one conversation: the reply
// says when in words, and the store holds what the reply says.
func TestReminderGrammar(t *testing.T) {
	w, p, store := remindWorld(t)
	for _, tc := range []struct{ text, reply string }{
		{"10分钟后提醒我喝水", "好的，10分钟后（14:32）提醒你喝水。"},
		{"半小时后提醒我关火", "好的，半小时后（14:52）提醒你关火。"},
		{"提醒我一个半小时后去取衣服", "好的，1小时30分钟后（15:52）提醒你取衣服。"},
		{"明天早上8点提醒我开会", "好的，明天08:00提醒你开会。"},
		{"下午三点提醒我取快递", "好的，今天15:00提醒你取快递。"},
		{"三点提醒我打电话", "好的，今天15:00提醒你打电话。"},
		{"晚上八点半提醒我看书", "好的，今天20:30提醒你看书。"},
		{"明天上午十点十五分提醒我交房租", "好的，明天10:15提醒你交房租。"},
		{"后天中午12点提醒我吃饭", "好的，后天12:00提醒你吃饭。"},
		{"每天晚上10点提醒我吃药", "好的，每天22:00提醒你吃药。"},
		{"每周一早上9点提醒我交周报", "好的，每周一09:00提醒你交周报。"},
		{"计时5分钟", "好的，开始计时5分钟，14:27到时叫你。"},
		{"倒计时三十秒", "好的，开始计时30秒，14:22到时叫你。"},
		{"remind me in 5 minutes to stretch", "OK, I'll remind you to stretch in 5 minutes (14:27)."},
		{"remind me to drink water in half an hour", "OK, I'll remind you to drink water in 30 minutes (14:52)."},
		{"remind me at 7pm to call mom", "OK, I'll remind you to call mom today at 19:00."},
		{"remind me tomorrow at 7:30 am to walk the dog", "OK, I'll remind you to walk the dog tomorrow at 07:30."},
		{"remind me every day at 8am to take my pills", "OK, I'll remind you to take your pills every day at 08:00."},
		{"remind me every monday at 9am to send the report", "OK, I'll remind you to send the report every Monday at 09:00."},
		{"set a timer for 3 minutes", "OK, a timer for 3 minutes is running: I'll tell you at 14:25."},
		{"set a timer for two hours", "OK, a timer for 2 hours is running: I'll tell you at 16:22."},
		{"remind me to stretch", "When should I remind you?"},
		{"提醒我", "什么时候提醒你？"},
	} {
		f := w.turn(t, tc.text)
		if err := plan(t, p, f); err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if got := f.reply(); !strings.HasPrefix(got, tc.reply) {
			t.Errorf("%q: reply\n got %q\nwant %q\ncalls %v", tc.text, got, tc.reply, f.recorded())
		}
	}
	list, err := store.List(context.Background(), "u1", time.UTC)
	if err != nil || len(list) != 21 {
		t.Fatalf("stored %d reminders, %v; want 21", len(list), err)
	}

	for _, tc := range []struct{ text, reply string }{
		{"我有哪些提醒", "你有21个提醒：今天14:22 计时结束；"},
		{"what reminders do I have", "You have 21 reminders: a timer ends today at 14:22;"},
		{"取消喝水的提醒", "好的，已取消喝水的提醒。"},
		{"cancel the stretch reminder", "OK, I canceled the stretch reminder."},
		{"取消打太极的提醒", "没有找到关于“打太极”的提醒。"},
		{"cancel the timer", "OK, I canceled 4 timers."},
		{"取消计时", "你现在没有计时。"},
		{"取消所有提醒", "好的，已取消所有提醒（15个）。"},
		{"what reminders do I have", "You have no reminders."},
		{"cancel all reminders", "You have no reminders."},
	} {
		f := w.turn(t, tc.text)
		if err := plan(t, p, f); err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if got := f.reply(); !strings.HasPrefix(got, tc.reply) {
			t.Errorf("%q: reply\n got %q\nwant %q\ncalls %v", tc.text, got, tc.reply, f.recorded())
		}
	}
}

// A time in the past is refused by the tool, and the reply says why.
func TestReminderInThePast(t *testing.T) {
	w, p, _ := remindWorld(t)
	f := w.turn(t, "今天早上8点提醒我开会")
	if err := plan(t, p, f); err != nil {
		t.Fatal(err)
	}
	if got := f.reply(); !strings.Contains(got, "设提醒没有成功") || !strings.Contains(got, "is in the past") {
		t.Errorf("reply %q", got)
	}
}

func FuzzWhen(f *testing.F) {
	for _, s := range []string{"10分钟后提醒我喝水", "明天早上8点提醒我开会", "每周一早上9点提醒我交周报", "下午3点半", "8:30",
		"remind me every monday at 9am to x", "in an hour and a half", "at noon", "set a timer for 3 minutes", "12.5分"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 26, 14, 22, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range []when{func() when { w, _ := parseWhenZh(fixClock(digitizeZh(s))); return w }(),
			func() when { w, _ := parseWhenEn(digitizeEn(lowerASCII(s))); return w }()} {
			if w.in < 0 {
				t.Fatalf("%q: negative duration %v", s, w.in)
			}
			if w.clock && !w.every && w.in == 0 {
				if at := w.at(now); !at.After(now) && !w.day {
					t.Fatalf("%q: %v is not after now", s, at)
				}
			}
		}
		parse(s)
	})
}
