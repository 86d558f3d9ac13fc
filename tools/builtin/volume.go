package builtin

import (
	"context"
	"fmt"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

type volumeInput struct {
	Level int `json:"level" tool:"min=0,max=100"`
}

type volumeResult struct {
	Status  string `json:"status"` // "success"
	Message string `json:"message"`
	Level   int    `json:"level"` // as read back from the speaker
}

func volumeTool(spk hal.Speaker, txt *text) (*tools.Tool, error) {
	t, err := tools.Func(tools.Declaration{
		Name:        protocol.ToolVolume,
		Description: txt.volume,
		MainType:    tools.Remote,
		SubType:     tools.Control,
	}, func(ctx context.Context, in volumeInput) (volumeResult, error) {
		level, err := setAndRead(ctx, in.Level, spk.SetVolume, spk.Volume,
			hal.ErrOutOfRange, txt.volumeOutOfRange, txt.volumeSetFailed, txt.volumeReadFailed)
		if err != nil {
			return volumeResult{}, err
		}
		return volumeResult{Status: protocol.StatusSuccess, Message: fmt.Sprintf(txt.volumeSet, level), Level: level}, nil
	})
	if err != nil {
		return nil, err
	}
	t.Resources = []string{ResourceSpeaker}
	return t, describe(t, "level", txt.volumeLevel)
}
