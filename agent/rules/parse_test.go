package rules

import (
	"fmt"
	"testing"
)

func TestDigitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"把音量调到三十", "把音量调到30"},
		{"音量调成百分之五十", "音量调成百分之50"},
		{"大声一点", "大声一点"},   // "a bit", not one
		{"笑一个", "笑一个"},     // "a", not one
		{"等一下", "等一下"},     //
		{"三点五加二", "3.5加2"}, // a decimal point
		{"两点", "两点"},       // two o'clock is not a volume
		{"两个", "2个"},
		{"一百二十三", "123"},
		{"音量一百零五", "音量105"},
		{"负三减四", "负3减4"},
		{"一千零十加五", "1010加5"},   // 零 marks the missing hundreds
		{"两亿三千万", "230000000"}, // 亿, as numerals reads it
		{"壹佰贰拾叁", "123"},       // financial forms
		{"百分之五十", "百分之50"},     // 百 alone is no number here
		{"十十", "十十"},           // nor is 十十
		{"一二三四五六七八九零一二三", "一二三四五六七八九零一二三"}, // too long to be an operand
	} {
		if got := digitizeZh(tc.in); got != tc.want {
			t.Errorf("digitizeZh(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"add five and ten", "add 5 and 10"},
		{"twenty five", "25"},
		{"twenty-five", "25"},
		{"one hundred and five", "105"},
		{"one hundred twenty", "120"},
		{"a hundred", "100"},
		{"volume eighty", "volume 80"},
		{"someone has one", "someone has 1"},
		{"five ten", "5 10"},
		{"twelve divided by four", "12 divided by 4"},
		{"zero", "0"},
		{"three thousand and five", "3005"},
		{"a hundred,five", "100,5"},
	} {
		if got := digitizeEn(tc.in); got != tc.want {
			t.Errorf("digitizeEn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"3*(4+5)", "3*(4+5)", true},
		{"3 * ( 4 + 5 )", "3*(4+5)", true},
		{"add 5 and 10", "5+10", true},
		{"add 5 to 10", "5+10", true},
		{"the sum of 2.5 and 4", "2.5+4", true},
		{"subtract 3 from 10", "10-3", true},
		{"multiply 6 by 7", "6*7", true},
		{"divide 9 by 3", "9/3", true},
		{"what is 12 divided by 4", "12/4", true},
		{"5 plus 10 minus 2", "5+10-2", true},
		{"7 x 8", "7*8", true},
		{"5加10", "5+10", true},
		{"10乘以3", "10*3", true},
		{"10除以4等于多少", "10/4", true},
		{"计算3减去负2", "3--2", true},
		{"-5+3", "-5+3", true},
		{"add -5 and 3", "(-5)+3", true},
		{"30", "", false},
		{"-5", "", false},
		{"3+", "", false},
		{"(3+4", "", false},
		{"3+4)", "", false},
		{"3..4+1", "", false},
		{"3 4", "", false},
		{"hello", "", false},
		{"5加", "", false},
	} {
		got, ok := arithmetic(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("arithmetic(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// More phrasings, checked as intents (what would be called, before any tool).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"音量調到三十", "set 30"}, // traditional 調: 到 and 音量 are enough
		{"把声音开到最大", "set max"},
		{"音量最小", "set min"},
		{"取消静音", "set 50"},
		{"unmute", "set 50"},
		{"turn the volume all the way up", "set max"},
		{"sound at 30", "set 30"},
		{"turn it down", "step -1"},
		{"volume down 5", "step -5"},
		{"大点声", "step 1"},
		{"再大声一点", "step 1"},
		{"音量", "status volume"},
		{"volume?", "status volume"},
		{"查一下状态", "status"},
		{"你还好吗", "status"},
		{"how's it going", "status"},
		{"你好", "help greet"},
		{"hello", "help greet"},
		{"你能做什么", "help"},
		{"笑", "face smile"},
		{"be happy", "face smile"},
		{"睁开眼睛", "face idle"},
		{"记得我喜欢猫", "remember 我喜欢猫"},
		{"记得我喜欢什么吗", "recall 我喜欢"},
		{"请记住：我的生日是五月一日", "remember 我的生日是五月一日"},
		{"remember that I like tea, coffee and cake", "remember I like tea, coffee and cake"},
		{"what's my name", "recall my name"},
		{"where do I live", "recall I live"},
		{"what do you remember about me", "recall "},
		{"删掉这条记忆", "forget "},
		{"forget it", "forget "},
		{"忘记我喜欢猫", "forget 我喜欢猫"},
		{"look up the weather in Oslo", "search the weather in Oslo"},
		{"搜一下量子计算", "search 量子计算"},
		{"上网查今天的新闻", "search 今天的新闻"},
		{"search", "search "},
	} {
		ins := parse(tc.in)
		got := ""
		for i, in := range ins {
			if i > 0 {
				got += " | "
			}
			got += describeIntent(in)
		}
		if got != tc.want {
			t.Errorf("parse(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func describeIntent(in intent) string {
	switch in.kind {
	case kVolumeSet:
		switch in.n {
		case levelMax:
			return "set max"
		case levelMin:
			return "set min"
		}
		return fmt.Sprintf("set %d", in.n)
	case kVolumeStep:
		return fmt.Sprintf("step %d", in.n)
	case kFace:
		return "face " + in.text
	case kStatus:
		if in.volumeOnly {
			return "status volume"
		}
		return "status"
	case kCalc:
		return "calc " + in.text
	case kRemember:
		return "remember " + in.text
	case kRecall:
		return "recall " + in.text
	case kForget:
		return "forget " + in.text
	case kSearch:
		return "search " + in.text
	case kHelp:
		if in.greet {
			return "help greet"
		}
		return "help"
	case kThanks:
		return "thanks"
	}
	return "unknown " + in.text
}
