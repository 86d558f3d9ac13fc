//go:build !devicectl_omit_serve

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
)

// benchCommands are 20 different things said to the device, and what the rule planner must do
// for each: the tool it calls and a piece of its input ("" tool: a reply with no tool). They run
// in this order: "quieter" reads the level "max volume" set, "what do I like" finds the tea.
var benchCommands = []struct{ text, tool, input string }{
	{"set the volume to thirty", "amplify_volume", `"level":30`},
	{"set the volume to seventy five", "amplify_volume", `"level":75`},
	{"volume fifty", "amplify_volume", `"level":50`},
	{"turn it down to twenty", "amplify_volume", `"level":20`},
	{"mute", "amplify_volume", `"level":0`},
	{"max volume", "amplify_volume", `"level":100`},
	{"quieter", "amplify_volume", `"level":90`},
	{"smile", "set_virtual_human_expression", `"smile"`},
	{"look amazed", "set_virtual_human_expression", `"amazed"`},
	{"cry", "set_virtual_human_expression", `"cry"`},
	{"close your eyes", "set_virtual_human_expression", `"close_eyes"`},
	{"squint", "set_virtual_human_expression", `"close_eyes_smile"`},
	{"neutral", "set_virtual_human_expression", `"idle"`},
	{"how are you", "get_device_status", ""},
	{"what's the volume", "get_device_status", ""},
	{"add five and ten", "calculate", ""},
	{"twelve times four", "calculate", ""},
	{"remember that i like tea", "add_user_memory", "tea"},
	{"what do i like", "search_user_memories", ""},
	{"what can you do", "", ""},
}

// benchVoices are flite's built-in voices the benchmark speaks with (flite -lv); kal, at 8 kHz,
// is left out.
var benchVoices = []string{"slt", "rms"}

// TestVoiceBench is the voice benchmark `make bench` runs (DEVICECTL_VOICE_BENCH=1): each command
// in each voice, spoken into the microphone's sink, through the whole loop. It reports the share
// that led to the right action (target >= 19/20 per voice) and the latency from the utterance's
// last sample to the reply's first sample at the speaker (target p50 <= 1 s), with its stages.
func TestVoiceBench(t *testing.T) {
	if os.Getenv("DEVICECTL_VOICE_BENCH") != "1" {
		t.Skip("the voice benchmark: DEVICECTL_VOICE_BENCH=1 (make bench) runs it")
	}
	needVoice(t)
	bin := serveproc.Build(t)
	pulsetest.Start(t, micSink)
	r := startVoiceRig(t, bin, "{driver: pulse, device: "+micSink+".monitor}", "{listen: vad}")
	var stages []benchStage
	right := map[string]int{}
	for _, v := range benchVoices {
		for _, cmd := range benchCommands {
			wav := utterance(t, v, cmd.text, 0.3)
			st, ok := r.once(t, wav, cmd.text, cmd.tool, cmd.input)
			if ok {
				right[v]++
			}
			st.voice, st.text, st.ok = v, cmd.text, ok
			stages = append(stages, st)
		}
	}
	fmt.Println("voice-bench: command                            voice heard                              ok   vad    stt  turn  audio  total")
	for _, s := range stages {
		fmt.Printf("voice-bench: %-34s %-5s %-34q %-4v %5s %5s %5s %5s %6s\n", s.text, s.voice, s.heard, s.ok, ms(s.vad), ms(s.stt), ms(s.turn), ms(s.audio), ms(s.total))
	}
	var totals []time.Duration
	for _, s := range stages {
		if s.total > 0 {
			totals = append(totals, s.total)
		}
	}
	for _, v := range benchVoices {
		fmt.Printf("voice-bench: accuracy %s %d/%d (target >= 19/20)\n", v, right[v], len(benchCommands))
	}
	p50, p90 := percentile(totals, 50), percentile(totals, 90)
	fmt.Printf("voice-bench: latency p50 %s p90 %s over %d replies (target p50 <= 1s)\n", ms(p50), ms(p90), len(totals))
	stage := func(name string, f func(benchStage) time.Duration) {
		var d []time.Duration
		for _, s := range stages {
			if f(s) > 0 {
				d = append(d, f(s))
			}
		}
		fmt.Printf("voice-bench: stage %-6s p50 %s p90 %s\n", name, ms(percentile(d, 50)), ms(percentile(d, 90)))
	}
	stage("vad", func(s benchStage) time.Duration { return s.vad })
	stage("stt", func(s benchStage) time.Duration { return s.stt })
	stage("turn", func(s benchStage) time.Duration { return s.turn })
	stage("audio", func(s benchStage) time.Duration { return s.audio })
}

// benchStage is one utterance's way through the loop. vad: from its last sample to the device
// sending it (the voice activity detector's closing silence); stt: the server's transcription;
// turn: from the server hearing it to the turn's reply; audio: from the reply to its first
// sample at the speaker (negative when a first sentence was spoken before the reply ended);
// total: from the last sample to the first sample of reply audio.
type benchStage struct {
	voice, text, heard string
	ok                 bool
	vad, stt, turn     time.Duration
	audio, total       time.Duration
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[min(len(d)-1, (len(d)*p+99)/100-1)]
}

// logLine is a JSON log line's fields the benchmark reads.
type logLine struct {
	Time   time.Time       `json:"time"`
	Msg    string          `json:"msg"`
	Text   string          `json:"text"`
	TurnID string          `json:"turn_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	Reply  string          `json:"reply"`
	Took   time.Duration   `json:"took"`
	By     string          `json:"by"`
}

func parseLog(lines []string) []logLine {
	var out []logLine
	for _, l := range lines {
		var e logLine
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// once speaks one command and follows it through the loop.
func (r *voiceRig) once(t *testing.T, wav, text, tool, input string) (benchStage, bool) {
	t.Helper()
	var st benchStage
	serveFrom := len(r.log.all())
	devFrom := strings.Count(r.devErr.String(), "\n")
	// Loud enough to hear the reply whatever the last command did to the volume ("mute").
	setSinkVolume(t, 100)
	rec := record(t, r.dir)
	rec.waitQuiet(t) // the last reply is over
	end := play(t, wav)

	// The server heard it, or the device says nothing was understood.
	var heard logLine
	deadline := time.Now().Add(20 * time.Second)
	for heard.TurnID == "" && time.Now().Before(deadline) {
		for _, e := range parseLog(r.log.all()[serveFrom:]) {
			if e.Msg == "heard" && e.TurnID != "" {
				heard = e
				break
			}
		}
		dev := strings.Split(r.devErr.String(), "\n")[devFrom:]
		if strings.Contains(strings.Join(dev, "\n"), "heard nothing understandable") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if heard.TurnID == "" {
		rec.stop(t)
		t.Logf("%q: nothing heard", text)
		return st, false
	}
	st.heard = heard.Text
	// The turn's reply and its calls.
	var calls []logLine
	var replied logLine
	for replied.Msg == "" && time.Now().Before(deadline) {
		calls = calls[:0]
		for _, e := range parseLog(r.log.all()[serveFrom:]) {
			switch {
			case e.TurnID != heard.TurnID:
			case e.Msg == "the turn calls a tool":
				calls = append(calls, e)
			case e.Msg == "the turn replied":
				replied = e
			case e.Msg == "transcribed":
				st.stt = e.Took
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, e := range parseLog(r.log.all()[serveFrom:]) {
		if e.Msg == "transcribed" {
			st.stt = e.Took
		}
	}
	// The device says it: its first sample at the speaker (none after a mute).
	var first time.Time
	for first.IsZero() && input != `"level":0` && time.Now().Before(deadline) {
		// Not before the server heard it: a reply cannot start earlier.
		first = rec.firstSound(rec.samples(t), heard.Time)
		time.Sleep(20 * time.Millisecond)
	}
	rec.stop(t)
	for _, e := range parseLog(strings.Split(r.devErr.String(), "\n")[devFrom:]) {
		if e.Msg == "heard" && e.By == "server" {
			st.vad = e.Time.Add(-e.Took).Sub(end)
		}
	}
	if !replied.Time.IsZero() {
		st.turn = replied.Time.Sub(heard.Time)
	} else {
		t.Logf("%q: no reply logged", text)
	}
	if !first.IsZero() {
		st.total = first.Sub(end)
		if !replied.Time.IsZero() {
			st.audio = first.Sub(replied.Time)
		}
	}

	ok := heard.Text == text
	if tool != "" {
		found := false
		for _, c := range calls {
			if c.Tool == tool && strings.Contains(string(c.Input), input) {
				found = true
			}
		}
		ok = ok && found
	} else {
		ok = ok && replied.Reply != "" && len(calls) == 0
	}
	if !ok {
		var got []string
		for _, c := range calls {
			got = append(got, c.Tool+" "+string(c.Input))
		}
		t.Logf("%q: heard %q, called %q, replied %q", text, heard.Text, got, replied.Reply)
	}
	return st, ok
}
