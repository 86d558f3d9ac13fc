package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for the zero fields of Options.
const (
	DefaultMaxToolRounds = 8
	DefaultTimeout       = 2 * time.Minute
)

// DefaultSystemPrompt is the system message when Options.SystemPrompt is empty. It is written
// for a small device that speaks or shows its replies, and asks for replies in the person's own
// language, so one prompt serves Chinese and English speakers alike.
const DefaultSystemPrompt = `You are the voice of a small device (a robot, a speaker, a toy) that a person talks to.
Keep every reply short and easy to say aloud: one to three sentences, no markdown, no lists, no emoji, because the device speaks it or shows it on a small screen.
Use the tools you are given to act on the device (its volume, its face and so on) and to work things out; when the person asks for something a tool can do, call the tool instead of saying you did it.
After the tools answer, tell the person in a sentence what happened. If a tool fails, say so plainly. If nothing you can do fits the request, say what you can do.
Always reply in the language the person used: answer Chinese in Chinese and English in English.`

// Options configure a Planner. A nil *Options is not allowed: BaseURL and Model are required.
type Options struct {
	// BaseURL is the OpenAI-compatible API root, the part before /chat/completions, e.g.
	// http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp's server),
	// http://127.0.0.1:8000/v1 (vLLM) or https://api.openai.com/v1.
	BaseURL string
	// Model is the model name the endpoint knows, e.g. "qwen2.5:3b".
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty. The caller reads it from
	// a file (llm.api_key_file); it never appears in errors or logs.
	APIKey string
	// SystemPrompt is the first message of every request; "" is DefaultSystemPrompt.
	SystemPrompt string
	// MaxToolRounds bounds how many times one turn runs the tools the model asks for; a model
	// that still asks after that many rounds ends the turn with ErrToolRounds. 0 is
	// DefaultMaxToolRounds.
	MaxToolRounds int
	// Timeout bounds one request, from sending it to the end of its streamed answer; 0 is
	// DefaultTimeout. The turn's own deadline (the context) still applies on top.
	Timeout time.Duration
	// Temperature is sent when not nil; nil leaves it to the endpoint.
	Temperature *float64
	// Location, when set, makes every request tell the model the date, time and zone, so that it
	// can fill a reminder's time (set_reminder's at is ISO 8601 in this zone).
	Location *time.Location
	// Now is the clock the time told comes from; nil is time.Now.
	Now func() time.Time
	// HTTPClient makes the requests; nil is a plain &http.Client{}.
	HTTPClient *http.Client
	// Logger gets debug lines about requests and tool calls; nil logs nothing.
	Logger *slog.Logger
}

// withDefaults returns a checked copy of o with the zero fields filled; o is not modified.
func (o *Options) withDefaults() (Options, error) {
	if o == nil {
		return Options{}, errors.New("llm: no options: base URL and model are required")
	}
	c := *o
	c.BaseURL = strings.TrimSpace(c.BaseURL)
	c.Model = strings.TrimSpace(c.Model)
	if c.Model == "" {
		return Options{}, errors.New("llm: no model given (llm.model)")
	}
	if err := checkBaseURL(c.BaseURL); err != nil {
		return Options{}, err
	}
	// The key is read from a file: a trailing newline is not part of it.
	c.APIKey = strings.TrimSpace(c.APIKey)
	if strings.TrimSpace(c.SystemPrompt) == "" {
		c.SystemPrompt = DefaultSystemPrompt
	}
	switch {
	case c.MaxToolRounds < 0:
		return Options{}, fmt.Errorf("llm: max tool rounds %d is negative", c.MaxToolRounds)
	case c.MaxToolRounds == 0:
		c.MaxToolRounds = DefaultMaxToolRounds
	}
	switch {
	case c.Timeout < 0:
		return Options{}, fmt.Errorf("llm: timeout %v is negative", c.Timeout)
	case c.Timeout == 0:
		c.Timeout = DefaultTimeout
	}
	if c.Temperature != nil {
		t := *c.Temperature
		if t < 0 || t > 2 {
			return Options{}, fmt.Errorf("llm: temperature %g is outside [0, 2]", t)
		}
		c.Temperature = &t // the caller's variable may change later
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Logger = c.Logger.With("component", "llm")
	return c, nil
}

func checkBaseURL(s string) error {
	if s == "" {
		return errors.New("llm: no base URL given (llm.base_url), e.g. http://127.0.0.1:11434/v1")
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse quotes the whole string, password included: say only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("llm: base URL (llm.base_url) does not parse: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("llm: base URL %s is not http:// or https://", u.Redacted())
	}
	if u.Host == "" {
		return fmt.Errorf("llm: base URL %s has no host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("llm: base URL %s has a query or fragment; give only the API root, e.g. http://127.0.0.1:11434/v1", u.Redacted())
	}
	if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/chat/completions") {
		return fmt.Errorf("llm: base URL %s must stop before /chat/completions, e.g. http://127.0.0.1:11434/v1", u.Redacted())
	}
	return nil
}
