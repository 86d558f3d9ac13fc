//go:build !devicectl_omit_serve

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/flite"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
	"github.com/devicectl/devicectl/internal/testing/serveproc"
	"github.com/devicectl/devicectl/internal/testing/standin"
)

// The voice loop end to end, with no network and no sound card: flite speaks a command into the
// null sink micSink, whose monitor is `devicectl run`'s microphone (PulseAudio); the device's
// speaker is the null sink pulsetest.Sink, where espeak-ng says its replies; `devicectl serve`
// transcribes with pocketsphinx and its grammar and plans with the rule planner.

// micSink is the null sink speech is played into; its monitor is the device's microphone.
const micSink = "mic"

// voiceRig is serve (in this process) and a devicectl run process on two null sinks.
type voiceRig struct {
	mac    string
	out    *lineWaiter // serve's console
	devErr *logbuf.Buffer
	exited chan struct{}
	dir    string
	log    *lockedLines // serve's
}

// needVoice ends the test unless the programs of the loop are installed (CI installs them:
// pocketsphinx pocketsphinx-en-us flite sox pulseaudio-utils espeak-ng).
func needVoice(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts PulseAudio")
	}
	pulsetest.Need(t, "pocketsphinx_continuous", "pocketsphinx pocketsphinx-en-us")
	pulsetest.Need(t, "flite", "flite")
	pulsetest.Need(t, "sox", "sox")
	pulsetest.Need(t, "pactl", "pulseaudio-utils")
	pulsetest.Need(t, "paplay", "pulseaudio-utils")
	pulsetest.Need(t, "parec", "pulseaudio-utils")
	pulsetest.Need(t, "espeak-ng", "espeak-ng")
}

// startVoiceRig starts serve and the device; microphone and voice are the device's
// hardware.microphone and voice sections (YAML flow mappings).
func startVoiceRig(t *testing.T, bin, microphone, voice string) *voiceRig {
	t.Helper()
	r := &voiceRig{mac: "02-00-00-00-00-51", dir: t.TempDir(), log: &lockedLines{}}
	doc := "agent: {listen: '127.0.0.1:0', state_dir: " + t.TempDir() + "}\nlog: {level: debug, format: json}\n"
	serveCfg := standin.WriteFile(t, "serve.yaml", doc)
	srv := startServe(t, r.log.add, "--config", serveCfg)
	wsURL := srv.url
	r.out = srv.out

	cfg := fmt.Sprintf(`server:
  url: %s
device:
  mac: %s
  state_dir: %s
  language: en
hardware:
  speaker: {driver: pulse, device: %s}
  speech: {driver: command, command: [espeak-ng, -v, en]}
  microphone: %s
voice: %s
log:
  level: debug
  format: json
`, wsURL, r.mac, t.TempDir(), pulsetest.Sink, microphone, voice)
	path := standin.WriteFile(t, "devicectl.yaml", cfg)
	dev := serveproc.Run(t, bin, path)
	r.devErr, r.exited = &dev.Err, dev.Exited
	r.out.waitFor(t, "+ "+r.mac+" registered")
	return r
}

// utterance has flite say text in voice as a 16 kHz mono WAV with lead seconds of silence
// before it and a little after.
func utterance(t testing.TB, voice, text string, lead float64) string {
	t.Helper()
	return flite.Say(t, flite.Speech{Text: text, Voice: voice, Lead: lead, Trail: 0.1})
}

// play plays wav into the microphone's sink and returns when its last sample has been played.
func play(t testing.TB, wav string) time.Time {
	t.Helper()
	if out, err := exec.Command("paplay", "-d", micSink, wav).CombinedOutput(); err != nil {
		t.Fatalf("paplay: %v\n%s", err, out)
	}
	return time.Now()
}

// sinkVolume is the speaker sink's volume in percent, as pactl reads it.
func sinkVolume(t testing.TB) int {
	t.Helper()
	b, err := exec.Command("pactl", "get-sink-volume", pulsetest.Sink).CombinedOutput()
	if err != nil {
		t.Fatalf("pactl get-sink-volume: %v: %s", err, b)
	}
	m := regexp.MustCompile(`(\d+)%`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("pactl get-sink-volume printed %q", b)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func setSinkVolume(t testing.TB, percent int) {
	t.Helper()
	if b, err := exec.Command("pactl", "set-sink-volume", pulsetest.Sink, fmt.Sprintf("%d%%", percent)).CombinedOutput(); err != nil {
		t.Fatalf("pactl set-sink-volume: %v: %s", err, b)
	}
}

// recorder records the speaker sink's monitor from now on.
type recorder struct {
	cmd   *exec.Cmd
	path  string
	start time.Time
}

func record(t testing.TB, dir string) *recorder {
	t.Helper()
	r := &recorder{path: filepath.Join(dir, fmt.Sprintf("speaker-%d.raw", time.Now().UnixNano()))}
	f, err := os.Create(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r.cmd = exec.Command("parec", "-d", pulsetest.Sink+".monitor", "--rate=16000", "--channels=1", "--format=s16le", "--raw", "--latency-msec=10")
	r.cmd.Stdout = f
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("parec: %v", err)
	}
	r.start = time.Now()
	return r
}

// stop ends the recording and returns its samples.
func (r *recorder) stop(t testing.TB) []int16 {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
	return r.samples(t)
}

// samples are the samples recorded so far.
func (r *recorder) samples(t testing.TB) []int16 {
	t.Helper()
	b, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	s := make([]int16, len(b)/2)
	for i := range s {
		s[i] = int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8)
	}
	return s
}

// soxPeak is sox's maximum amplitude of the recording (0..1): what the speaker played, through
// the sink's volume.
func (r *recorder) soxPeak(t testing.TB) float64 {
	t.Helper()
	out, err := exec.Command("sox", "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", r.path, "-n", "stat").CombinedOutput()
	if err != nil {
		t.Fatalf("sox stat: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Maximum amplitude:\s+([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("sox stat printed no maximum amplitude:\n%s", out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// firstSound is when the recording first carries sound after from, or the zero time.
func (r *recorder) firstSound(samples []int16, from time.Time) time.Time {
	// About -60 dBFS: a null sink's silence is exact zeros, and espeak-ng through a sink at 20%
	// (PulseAudio's volume is cubic: 0.8%) still peaks far above it.
	const threshold = 30
	i0 := max(0, int(from.Sub(r.start).Seconds()*16000))
	for i := i0; i < len(samples); i++ {
		if samples[i] > threshold || samples[i] < -threshold {
			return r.start.Add(time.Duration(i) * time.Second / 16000)
		}
	}
	return time.Time{}
}

// waitQuiet waits until the speaker has been silent for 1.5 s: a reply still being said would be
// taken for the next one. Silence is what the recording holds, so it is looked at until it shows.
func (r *recorder) waitQuiet(t testing.TB) {
	t.Helper()
	const quiet = 24000 // samples: 1.5 s, longer than the pause between two sentences' programs
	poll.Until(t, "1.5 s of silence on the speaker", func() bool {
		s := r.samples(t)
		if len(s) < quiet {
			return false
		}
		for _, v := range s[len(s)-quiet:] {
			if v > 30 || v < -30 {
				return false
			}
		}
		return true
	})
}

// waitVolume waits until the speaker sink reads percent: only the sound server can tell when the
// device's set has reached it.
func (r *voiceRig) waitVolume(t testing.TB, percent int) {
	t.Helper()
	last, reached := -1, false
	defer func() {
		if !reached {
			t.Logf("the speaker sink last read %d%%\nserve:\n%s\ndevice:\n%s", last, r.log, tail(r.devErr.String(), 40))
		}
	}()
	poll.Until(t, fmt.Sprintf("the speaker sink at %d%%", percent), func() bool {
		last = sinkVolume(t)
		return last == percent
	})
	reached = true
}

// checkLoop plays "set the volume to thirty" (already in the microphone, for mode file), and
// checks the sink reads 30% and the reply is heard on the speaker.
func checkLoop(t *testing.T, r *voiceRig, rec *recorder) {
	t.Helper()
	r.out.waitFor(t, r.mac+" heard: set the volume to thirty")
	r.waitVolume(t, 30)
	// The reply is spoken after the volume is set: wait for espeak-ng to have said it.
	r.devErr.WaitUntil(t, "the reply spoken", r.exited, func(s string) bool { return strings.Contains(s, "utterance spoken") })
	rec.stop(t)
	if peak := rec.soxPeak(t); peak < 0.005 {
		t.Errorf("sox hears a peak of %.4f on the speaker's monitor: the reply was not heard\ndevice:\n%s", peak, tail(r.devErr.String(), 40))
	} else {
		t.Logf("sox hears the reply on the speaker's monitor: peak %.4f", peak)
	}
}

func TestVoiceLoopVAD(t *testing.T) {
	needVoice(t)
	bin := serveproc.Build(t)
	pulsetest.Start(t, micSink)
	setSinkVolume(t, 63)
	r := startVoiceRig(t, bin, "{driver: pulse, device: "+micSink+".monitor}", "{listen: vad}")
	wav := utterance(t, "slt", "set the volume to thirty", 0.5)
	rec := record(t, r.dir)
	play(t, wav)
	checkLoop(t, r, rec)
}

func TestVoiceLoopFile(t *testing.T) {
	needVoice(t)
	bin := serveproc.Build(t)
	pulsetest.Start(t, micSink)
	setSinkVolume(t, 63)
	dir := t.TempDir()
	// Silence first: the device registers while the file starts playing.
	wav := utterance(t, "rms", "set the volume to thirty", 2)
	rec := record(t, dir)
	r := startVoiceRig(t, bin, "{driver: file, file: "+wav+"}", "{listen: vad}")
	checkLoop(t, r, rec)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// lockedLines keeps a process's log lines (JSON) for failure messages and the benchmark's stages.
type lockedLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *lockedLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

func (l *lockedLines) String() string { return tail(strings.Join(l.all(), "\n"), 40) }
