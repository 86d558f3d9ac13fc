package stt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/devicectl/devicectl/internal/wav"
)

// OpenAIOptions configure an OpenAI engine. NewOpenAI copies them.
type OpenAIOptions struct {
	BaseURL    string // e.g. http://127.0.0.1:8080/v1; required (agent.stt.base_url)
	Model      string // e.g. whisper-1; required (agent.stt.model)
	APIKey     string // sent as a bearer token; "" sends none (local servers)
	HTTPClient *http.Client
}

// OpenAI sends each utterance to an OpenAI-compatible /audio/transcriptions endpoint.
type OpenAI struct {
	o    OpenAIOptions
	name string
	svc  openai.AudioTranscriptionService
}

// NewOpenAI checks o. It does not contact the endpoint.
func NewOpenAI(o *OpenAIOptions) (*OpenAI, error) {
	e := &OpenAI{}
	if o != nil {
		e.o = *o
	}
	u, err := url.Parse(e.o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("agent.stt.base_url %q is not an http:// or https:// URL", e.o.BaseURL)
	}
	if e.o.Model == "" {
		return nil, errors.New("agent.stt.model is empty: name the transcription model, e.g. whisper-1")
	}
	if e.o.HTTPClient == nil {
		e.o.HTTPClient = http.DefaultClient
	}
	e.name = fmt.Sprintf("openai %s at %s", e.o.Model, strings.TrimSuffix(u.Redacted(), "/")+"/audio/transcriptions")
	// The service, not openai.NewClient: the client would also read OPENAI_API_KEY and
	// OPENAI_BASE_URL from the environment and send a cloud key to a server nobody gave it to.
	opts := []option.RequestOption{
		option.WithBaseURL(e.o.BaseURL),
		option.WithHTTPClient(e.o.HTTPClient),
		option.WithMaxRetries(0), // a person is waiting; they can say it again
	}
	if e.o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(e.o.APIKey))
	}
	e.svc = openai.NewAudioTranscriptionService(opts...)
	return e, nil
}

func (e *OpenAI) String() string { return e.name }

// Transcribe sends a as a WAV file, with its language when known.
func (e *OpenAI) Transcribe(ctx context.Context, a Audio) (string, error) {
	var b bytes.Buffer
	if err := wav.Encode(&b, wav.Format{Rate: a.Rate, Channels: 1}, a.Samples); err != nil {
		return "", fmt.Errorf("%s: %w", e, err)
	}
	p := openai.AudioTranscriptionNewParams{
		File:  openai.File(&b, "utterance.wav", "audio/wav"),
		Model: openai.AudioModel(e.o.Model),
	}
	if a.Lang != "" {
		p.Language = openai.String(a.Lang)
	}
	res, err := e.svc.New(ctx, p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", e, err)
	}
	return strings.TrimSpace(res.Text), nil
}
