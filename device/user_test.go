package device_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/device/agenttest"
	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/standin"
	"github.com/devicectl/devicectl/protocol"
)

// A server that takes voice gets the utterance's samples as they were heard, and its turn's reply
// streams back as messages.
func TestUserAudioReachesTheServer(t *testing.T) {
	checkLeaks(t)
	heard := make(chan []int16, 1)
	srv := standin.Start(t, &agenttest.Options{Voice: &agenttest.Voice{
		Audio: func(ctx context.Context, d *agenttest.Device, p protocol.UserAudioParams) (protocol.UserResult, *jsonrpc2.Error) {
			s := make([]int16, len(p.Audio)/2)
			for i := range s {
				s[i] = int16(uint16(p.Audio[2*i]) | uint16(p.Audio[2*i+1])<<8)
			}
			heard <- s
			return protocol.UserResult{Status: protocol.StatusAccepted, Text: "hello", TurnID: "t1"}, nil
		},
	}})
	a := newAgent(t, device.Options{URL: srv.URL()})
	runAgent(t, a)
	waitState(t, a, device.Registered)
	if got := a.Voice(); got != device.VoiceTaken {
		t.Errorf("Voice() = %v, want VoiceTaken", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	samples := []int16{0, 1, -1, 32767, -32768, 1234}
	res, err := a.UserAudio(ctx, samples, "en")
	if err != nil || res.Status != protocol.StatusAccepted || res.Text != "hello" {
		t.Fatalf("UserAudio = %+v, %v", res, err)
	}
	if got := <-heard; !slices.Equal(got, samples) {
		t.Errorf("the server heard %v, want %v", got, samples)
	}
	// Text is not among its features: not sent.
	if _, err := a.UserText(ctx, protocol.UserTextParams{Text: "hi"}); !errors.Is(err, device.ErrNoVoice) {
		t.Errorf("UserText to a server without user/text: %v, want ErrNoVoice", err)
	}
	// Longer than 30 s is refused before it is sent.
	if _, err := a.UserAudio(ctx, make([]int16, 30*16000+1), "en"); err == nil || !strings.Contains(err.Error(), "longer than the 30s") {
		t.Errorf("a 30 s + 1 sample utterance: %v", err)
	}
}

// Against a server of seed 002 the device says once, whatever it hears and however often it
// reconnects, that the server does not take voice, and goes on serving its tools.
func TestSeed002ServerSaidOnce(t *testing.T) {
	checkLeaks(t)
	srv := standin.Start(t, nil)
	var logs logbuf.Buffer
	a := newAgent(t, device.Options{URL: srv.URL(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	runAgent(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for line := 0; line < 2; line++ {
		d := waitDevice(t, srv)
		waitState(t, a, device.Registered)
		for range 3 {
			if _, err := a.UserText(ctx, protocol.UserTextParams{Text: "hello", Lang: "en", Source: protocol.SourceVoice}); !errors.Is(err, device.ErrNoVoice) {
				t.Fatalf("UserText: %v, want ErrNoVoice", err)
			}
		}
		if got := a.Voice(); got != device.VoiceRefused {
			t.Errorf("Voice() = %v, want VoiceRefused", got)
		}
		if r := standin.Execute(t, d, "amplify_volume", `{"level":30}`); r.Error != nil {
			t.Errorf("a tool after voice was refused: %v", r.Error)
		}
		d.Close() // the next round is a new line
		<-d.Done()
	}
	if n := strings.Count(logs.String(), "does not take voice"); n != 1 {
		t.Errorf("said %d times that the server does not take voice, want once:\n%s", n, logs.String())
	}
}

// Nothing is sent while no line is registered.
func TestUserTextWithoutALine(t *testing.T) {
	a := newAgent(t, device.Options{URL: "ws://127.0.0.1:1/"})
	if _, err := a.UserText(context.Background(), protocol.UserTextParams{Text: "hi"}); !errors.Is(err, device.ErrNotRegistered) {
		t.Errorf("UserText before Run: %v, want ErrNotRegistered", err)
	}
	if err := a.Interrupt(); !errors.Is(err, device.ErrNotRegistered) {
		t.Errorf("Interrupt before Run: %v, want ErrNotRegistered", err)
	}
}
