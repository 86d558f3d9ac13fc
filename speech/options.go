package speech

import (
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
)

// DefaultQueueSize is the number of utterances a Speaker holds while one is being spoken.
const DefaultQueueSize = 64

// Options configure NewSpeaker and NewNarrator. A nil *Options is the zero value: espeak-ng in
// English, whole replies, no logging. The constructors copy it; the caller's struct is never
// changed.
type Options struct {
	// Command is the argv of the program that speaks one utterance: it gets the text on its stdin,
	// ending in a newline, and is expected to exit once it has spoken it. It is run directly, not
	// through a shell, so a pipeline (piper ... | aplay ...) needs a wrapper script. Empty means
	// DefaultCommand(Lang).
	Command []string
	// Lang picks the espeak-ng voice when Command is empty: "en" (the default) or "zh".
	Lang string
	// Sentences makes a Narrator speak each sentence as soon as its chunks have arrived, instead
	// of the whole reply once it is final.
	Sentences bool
	// QueueSize bounds the utterances waiting behind the one being spoken; when it is full the
	// oldest is dropped. 0 means DefaultQueueSize.
	QueueSize int
	// Logger receives command failures and dropped utterances; nil discards.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
		c.Command = append([]string(nil), o.Command...)
	}
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// DefaultCommand returns the espeak-ng command line for lang ("en" or "" for English, "zh" or
// "cmn" for Mandarin; a region such as "en-GB" or "zh_CN" is accepted and ignored). With no text
// argument espeak-ng reads stdin, which is what a Speaker feeds. It fails, wrapping
// exec.ErrNotFound, when espeak-ng is not on PATH.
func DefaultCommand(lang string) ([]string, error) {
	voice, err := voiceFor(lang)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		return nil, fmt.Errorf("speech: espeak-ng is not installed (apt-get install espeak-ng) "+
			"and no hardware.speech.command is configured: %w", err)
	}
	return []string{"espeak-ng", "-v", voice}, nil
}

func voiceFor(lang string) (string, error) {
	base, _, _ := strings.Cut(strings.ToLower(lang), "-")
	base, _, _ = strings.Cut(base, "_")
	switch base {
	case "", "en":
		return "en", nil
	case "zh", "cmn":
		// espeak-ng renamed its Mandarin voice from zh to cmn in 1.49 (2016); "zh" now
		// means whichever Chinese voice sorts first, which is not guaranteed to be Mandarin.
		return "cmn", nil
	}
	return "", fmt.Errorf("speech: no default voice for language %q (want en or zh); configure hardware.speech.command", lang)
}
