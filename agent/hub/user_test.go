package hub_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

var update = flag.Bool("update", false, "rewrite the wire scripts in testdata with what the hub sent")

// listener stands in for the agent server: it hears samples by their first value and answers a
// turn with chunks sent through the hub, as the agent does.
type listener struct {
	h *hub.Hub

	mu    sync.Mutex
	turns []hub.UserTurn
}

func (l *listener) Transcribe(ctx context.Context, mac string, u hub.Utterance) (string, error) {
	switch u.Samples[0] {
	case 1:
		return "set the volume to thirty", nil
	case 2:
		return "", errors.New("command pocketsphinx_continuous (agent.stt.command): exit status 1: model not found")
	case 3: // as long as the line lives
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "", nil
}

func (l *listener) Turn(ctx context.Context, t hub.UserTurn) {
	l.mu.Lock()
	l.turns = append(l.turns, t)
	l.mu.Unlock()
	if t.Text == "keep talking" { // a long reply, until interrupted
		l.h.Send(t.MAC, "chunk", "Once upon a time")
		<-ctx.Done()
		l.h.Send(t.MAC, "final", "stopped: "+context.Cause(ctx).Error())
		return
	}
	l.h.Send(t.MAC, "chunk", "OK: ")
	l.h.Send(t.MAC, "final", "OK: "+t.Text)
}

// pcm is n samples whose first is first, as mcp/user/audio's base64.
func pcm(first int16, n int) string {
	b := make([]byte, 2*n)
	binary.LittleEndian.PutUint16(b, uint16(first))
	return base64.StdEncoding.EncodeToString(b)
}

// TestUserWire plays testdata/user.txt: each "> " line is a frame the device sends, each "< "
// line the next frame it must receive (as JSON; turn ids are random and read as "*"). -update
// rewrites the "< " lines with what the hub sent.
func TestUserWire(t *testing.T) {
	leakcheck.Check(t)
	l := &listener{}
	// The default queue: a request sent as soon as the last turn's final arrived may find that
	// turn's worker not yet free (TestUserBusy checks the queue's bound).
	h, url := start(t, &hub.Options{Listener: l})
	l.h = h
	events, stop := h.Subscribe(0)
	defer stop()
	runWire(t, url, "testdata/user.txt", map[string]string{
		"$HEARD":   pcm(1, 1600),
		"$SILENCE": pcm(0, 1600),
		"$FAILS":   pcm(2, 1600),
		"$TOOLONG": pcm(1, 30*16000+1),
		"$ODD":     base64.StdEncoding.EncodeToString([]byte{1, 2, 3}),
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	var texts []string
	for _, tt := range l.turns {
		texts = append(texts, tt.Text+"/"+tt.Source)
	}
	want := []string{"turn it up/voice", "set the volume to thirty/voice", "keep talking/"}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("turns run: %q; want %q", texts, want)
	}
	for _, w := range want {
		e := next(t, events, hub.Heard)
		if got := e.Text + "/" + e.Source; got != w || e.Device.MAC != macA || !strings.HasPrefix(e.TurnID, "turn-") {
			t.Errorf("Heard event %q from %s, turn %q; want %q from %s", got, e.Device.MAC, e.TurnID, w, macA)
		}
	}
}

// TestUserBusy: past Options.UserQueue a request is busy, on a line of its own so that no earlier
// turn is still leaving the worker when the slow one comes.
func TestUserBusy(t *testing.T) {
	leakcheck.Check(t)
	l := &listener{}
	h, url := start(t, &hub.Options{Listener: l, UserQueue: 1})
	l.h = h
	runWire(t, url, "testdata/user-busy.txt", map[string]string{"$SLOW": pcm(3, 1600)})
}

// TestUserSeed002: a hub without a Listener is a seed-002 server: no features, -32601.
func TestUserSeed002(t *testing.T) {
	leakcheck.Check(t)
	_, url := start(t, nil)
	runWire(t, url, "testdata/user-seed002.txt", nil)
}

var turnID = regexp.MustCompile(`"turn-[0-9a-f]{16}"`)

func runWire(t *testing.T, url, file string, vars map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	defer c.CloseNow()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "> "):
			frame := line[2:]
			for k, v := range vars {
				frame = strings.ReplaceAll(frame, k, v)
			}
			if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
				t.Fatalf("%s:%d: writing: %v", file, n, err)
			}
		case strings.HasPrefix(line, "< "):
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, got, err := c.Read(rctx)
			cancel()
			if err != nil {
				t.Fatalf("%s:%d: nothing received (want %s): %v", file, n, line[2:], err)
			}
			got = turnID.ReplaceAll(got, []byte(`"*"`))
			if *update {
				line = "< " + string(got)
			} else if !sameJSON(got, []byte(line[2:])) {
				t.Errorf("%s:%d: received\n\t%s\nwant\n\t%s", file, n, got, line[2:])
			}
		}
		out = append(out, line)
	}
	if *update {
		os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644)
	}
	// Nothing more was sent than the script says.
	rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, extra, err := c.Read(rctx); err == nil {
		t.Errorf("%s: the hub sent more than the script says: %s", file, extra)
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
