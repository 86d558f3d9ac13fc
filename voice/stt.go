package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/procgroup"
	stderrtail "github.com/devicectl/devicectl/internal/tail"
	"github.com/devicectl/devicectl/internal/wav"
)

// Transcriber turns an utterance into text on the device (voice.stt command or openai); the
// device then sends the text. Empty text means nothing was understood.
type Transcriber interface {
	Transcribe(ctx context.Context, samples []int16, lang string) (string, error)
}

// encodeWAV is the utterance as a 16 kHz mono WAV file.
func encodeWAV(samples []int16) []byte {
	var b bytes.Buffer
	b.Grow(44 + 2*len(samples))
	wav.Encode(&b, wav.Format{Rate: hal.SampleRate, Channels: 1}, samples) // writes to memory: cannot fail
	return b.Bytes()
}

// CommandSTT runs a program once per utterance: the utterance as a WAV file on its stdin, the
// text on its stdout. DEVICECTL_LANG in its environment is the language.
type CommandSTT struct {
	Argv []string
}

// maxTranscript bounds what a program or an endpoint may answer: far more than 30 s of speech.
const maxTranscript = 64 << 10

// Transcribe runs the command on samples.
func (c *CommandSTT) Transcribe(ctx context.Context, samples []int16, lang string) (string, error) {
	if len(c.Argv) == 0 {
		return "", errors.New("voice.stt_command: no command")
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(encodeWAV(samples))
	cmd.Env = append(cmd.Environ(), "DEVICECTL_LANG="+lang)
	var out bytes.Buffer
	stderr := &stderrtail.Buffer{Max: 512}
	cmd.Stdout, cmd.Stderr = &limitWriter{w: &out, n: maxTranscript}, stderr
	cmd.WaitDelay = time.Second
	procgroup.KillGroup(cmd)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("voice.stt_command %s: %w (stderr: %s)", c.Argv[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.Join(strings.Fields(out.String()), " "), nil
}

// limitWriter keeps the first n bytes and discards the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// OpenAISTT posts the utterance to an OpenAI-compatible transcription endpoint
// (BaseURL/audio/transcriptions: whisper.cpp's server, speaches, vLLM, LocalAI, OpenAI), as
// multipart/form-data with the file, the model and the language, and reads {"text": ...}.
type OpenAISTT struct {
	BaseURL string // e.g. http://127.0.0.1:8000/v1
	Model   string
	APIKey  string       // sent as a bearer token when set
	Client  *http.Client // nil: one with a 60 s timeout
}

// Transcribe posts samples and returns the text the endpoint heard.
func (o *OpenAISTT) Transcribe(ctx context.Context, samples []int16, lang string) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "utterance.wav")
	if err != nil {
		return "", err
	}
	fw.Write(encodeWAV(samples))
	mw.WriteField("model", o.Model)
	mw.WriteField("response_format", "json")
	if lang != "" {
		mw.WriteField("language", strings.SplitN(lang, "-", 2)[0]) // ISO-639-1, as the API takes it
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	url := strings.TrimRight(o.BaseURL, "/") + "/audio/transcriptions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return "", fmt.Errorf("voice.openai.base_url: %w", err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("transcribing at %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTranscript))
	if err != nil {
		return "", fmt.Errorf("transcribing at %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("transcribing at %s: %s: %s", url, resp.Status, strings.TrimSpace(string(raw[:min(len(raw), 300)])))
	}
	var r struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Text == nil {
		return "", fmt.Errorf("transcribing at %s: the answer is not {\"text\": ...}: %.200s", url, raw)
	}
	return strings.TrimSpace(*r.Text), nil
}
