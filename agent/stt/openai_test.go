package stt

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/wav"
)

// transcriptionServer answers /v1/audio/transcriptions with a recorded answer, after checking
// the request is what an OpenAI-compatible server takes: a multipart form with the model, the
// language and a 16 kHz mono WAV holding the samples sent.
func transcriptionServer(t *testing.T, want Audio, answer string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/transcriptions" || r.Method != http.MethodPost {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization %q", got)
		}
		if got := r.FormValue("model"); got != "whisper-1" {
			t.Errorf("model %q", got)
		}
		if got := r.FormValue("language"); got != want.Lang {
			t.Errorf("language %q, want %q", got, want.Lang)
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			t.Errorf("no file: %v", err)
		} else {
			wr, err := wav.NewReader(f)
			if err != nil {
				t.Errorf("the file is not a WAV: %v", err)
			} else if got, _ := wr.ReadAll(); wr.Rate != 16000 || wr.Channels != 1 || !slices.Equal(got, want.Samples) {
				t.Errorf("the WAV holds %d samples at %d Hz, %d channels; want the %d sent at 16000 Hz, mono", len(got), wr.Rate, wr.Channels, len(want.Samples))
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAIChinese(t *testing.T) {
	recorded, err := os.ReadFile("testdata/transcription-zh.json")
	if err != nil {
		t.Fatal(err)
	}
	a := Audio{Samples: []int16{0, 1000, -1000, 32767, -32768}, Rate: 16000, Lang: "zh"}
	srv := transcriptionServer(t, a, string(recorded))
	e, err := NewOpenAI(&OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "whisper-1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Transcribe(context.Background(), a)
	if err != nil || got != "把音量调到三十。" {
		t.Errorf("Transcribe = %q, %v; want 把音量调到三十。", got, err)
	}
}

func TestOpenAIErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"model not loaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	e, err := NewOpenAI(&OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "whisper-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Transcribe(context.Background(), Audio{Samples: make([]int16, 160), Rate: 16000})
	if err == nil || !strings.Contains(err.Error(), "openai whisper-1 at "+srv.URL+"/v1/audio/transcriptions") || !strings.Contains(err.Error(), "503") {
		t.Errorf("error %v; want it to name the engine, its endpoint and the status", err)
	}

	for _, tc := range []struct {
		o    OpenAIOptions
		want string
	}{
		{OpenAIOptions{BaseURL: "localhost:8080", Model: "m"}, "agent.stt.base_url"},
		{OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1"}, "agent.stt.model"},
	} {
		if _, err := NewOpenAI(&tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewOpenAI(%+v) = %v; want an error naming %s", tc.o, err, tc.want)
		}
	}
}

func TestNone(t *testing.T) {
	_, err := None{Why: "agent.stt.engine is none"}.Transcribe(context.Background(), Audio{})
	if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "agent.stt.engine is none") {
		t.Errorf("None: %v", err)
	}
}
