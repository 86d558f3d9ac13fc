//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"errors"
	"log/slog"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/stt"
	"github.com/devicectl/devicectl/internal/config"
)

// newSTT builds the speech-to-text engine agent.stt names. auto is PocketSphinx with its grammar
// where it is installed, else none, which answers audio saying how to configure one.
func newSTT(c *config.Config, log *slog.Logger) (stt.Engine, error) {
	sc := c.Agent.STT
	switch sc.Engine {
	case config.STTEngineAuto, "":
		ps, err := stt.NewPocketSphinx()
		if err != nil {
			log.Info("no speech-to-text engine: audio from devices will be refused", "why", stt.PocketSphinx+" is not on PATH", "key", "agent.stt.engine")
			return stt.None{Why: "agent.stt.engine is auto and " + stt.PocketSphinx + " is not on PATH: install pocketsphinx and pocketsphinx-en-us, or set agent.stt.engine to command or openai"}, nil
		}
		return ps, nil
	case config.STTEngineCommand:
		cmd, err := stt.NewCommand(&stt.CommandOptions{Argv: sc.Command, Key: "agent.stt.command"})
		if err != nil {
			return nil, &config.Error{Key: "agent.stt.command", Err: err}
		}
		return cmd, nil
	case config.STTEngineOpenAI:
		key := ""
		if sc.APIKeyFile != "" {
			var err error
			if key, err = config.ReadToken("agent.stt.api_key_file", sc.APIKeyFile, log); err != nil {
				return nil, err
			}
		}
		e, err := stt.NewOpenAI(&stt.OpenAIOptions{BaseURL: sc.BaseURL, Model: sc.Model, APIKey: key})
		if err != nil {
			return nil, &config.Error{Key: "agent.stt.base_url", Err: err}
		}
		return e, nil
	case config.STTEngineNone:
		return stt.None{Why: "agent.stt.engine is none"}, nil
	}
	return nil, &config.Error{Key: "agent.stt.engine", Err: errors.New(sc.Engine + " is not an engine")}
}

// voice hears what people say to devices (hub.Listener): audio through the engine, then a turn
// for the device, in one session per device so "forget that" finds what the last turn did.
type voice struct {
	s   *Server // its Agent and Web are set once New returns, before any device connects
	stt stt.Engine
	log *slog.Logger
}

var _ hub.Listener = (*voice)(nil)

// DeviceSession is the session of the turns a device's person starts by speaking or typing on it.
func DeviceSession(mac string) string { return "device/" + mac }

func (v *voice) Transcribe(ctx context.Context, mac string, u hub.Utterance) (string, error) {
	return v.stt.Transcribe(ctx, stt.Audio{Samples: u.Samples, Rate: u.Rate, Lang: u.Lang, Tools: v.s.Agent.Tools(mac)})
}

func (v *voice) Turn(ctx context.Context, t hub.UserTurn) {
	show := func(agent.Event) {}
	if v.s.Web != nil {
		show = v.s.Web.DeviceTurn(t.MAC, t.Text, t.Source)
	}
	for e := range v.s.Agent.Turn(ctx, agent.Request{Text: t.Text, MAC: t.MAC, SessionID: DeviceSession(t.MAC)}) {
		show(e)
		switch e.Kind {
		case agent.EventToolCall:
			v.log.Debug("the turn calls a tool", "mac", t.MAC, "turn_id", t.ID, "tool", e.Tool, "input", e.Input)
		case agent.EventFinal:
			v.log.Debug("the turn replied", "mac", t.MAC, "turn_id", t.ID, "reply", e.Text)
		case agent.EventError:
			v.log.Info("a device's turn failed", "mac", t.MAC, "turn_id", t.ID, "err", e.Err)
		}
	}
}
