package voice

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/wav"
)

// The command gets the utterance as a WAV on stdin and the language in its environment; its
// stdout, spaces folded, is the text.
func TestCommandSTT(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "got.wav")
	c := &CommandSTT{Argv: []string{"sh", "-c", `cat > "$0"; printf '  turn the\n volume up %s \n' "$DEVICECTL_LANG"`, got}}
	samples := []int16{0, 100, -100, 32767, -32768}
	text, err := c.Transcribe(context.Background(), samples, "en")
	if err != nil {
		t.Fatal(err)
	}
	if text != "turn the volume up en" {
		t.Errorf("text %q", text)
	}
	f, err := os.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := wav.NewReader(f)
	if err != nil {
		t.Fatalf("the command was not given a WAV: %v", err)
	}
	back, _ := r.ReadAll()
	if r.Rate != 16000 || r.Channels != 1 || !slices.Equal(back, samples) {
		t.Errorf("the command got %d Hz, %d channels, %v", r.Rate, r.Channels, back)
	}

	fail := &CommandSTT{Argv: []string{"sh", "-c", "echo no model here >&2; exit 3"}}
	if _, err := fail.Transcribe(context.Background(), samples, "en"); err == nil || !strings.Contains(err.Error(), "no model here") {
		t.Errorf("a failing command: %v; want its stderr in the error", err)
	}
}

// An OpenAI-compatible endpoint, as whisper servers answer: a recorded answer in Chinese.
func TestOpenAISTT(t *testing.T) {
	samples := []int16{1, 2, 3, -4}
	var form map[string]string
	var file []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "wrong request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form = map[string]string{}
		for k, v := range r.MultipartForm.Value {
			form[k] = v[0]
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		file, _ = io.ReadAll(f)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":" 把音量调到三十。 "}`)
	}))
	defer srv.Close()
	o := &OpenAISTT{BaseURL: srv.URL + "/v1/", Model: "whisper-1", APIKey: "sk-test"}
	text, err := o.Transcribe(context.Background(), samples, "zh-CN")
	if err != nil {
		t.Fatal(err)
	}
	if text != "把音量调到三十。" {
		t.Errorf("text %q", text)
	}
	if form["model"] != "whisper-1" || form["language"] != "zh" || form["response_format"] != "json" {
		t.Errorf("form %v", form)
	}
	if r, err := wav.NewReader(bytes.NewReader(file)); err != nil {
		t.Errorf("the file is not a WAV: %v", err)
	} else if back, _ := r.ReadAll(); !slices.Equal(back, samples) {
		t.Errorf("the file holds %v", back)
	}
}

func TestOpenAISTTErrors(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body, want string
	}{
		{500, `{"error":{"message":"model not loaded"}}`, "500 Internal Server Error: {\"error\":{\"message\":\"model not loaded\"}}"},
		{200, `{"transcript":"x"}`, `the answer is not {"text": ...}`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		_, err := (&OpenAISTT{BaseURL: srv.URL, Model: "m"}).Transcribe(context.Background(), []int16{1}, "en")
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), srv.URL+"/audio/transcriptions") {
			t.Errorf("status %d: %v; want %q and the URL", tc.status, err, tc.want)
		}
	}
}
