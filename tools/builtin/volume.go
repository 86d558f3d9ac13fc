package builtin

import (
	"context"
	"errors"
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
		if err := spk.SetVolume(ctx, in.Level); err != nil {
			if errors.Is(err, hal.ErrOutOfRange) {
				return volumeResult{}, refuse(txt.volumeOutOfRange, err)
			}
			return volumeResult{}, fail(txt.volumeSetFailed, err)
		}
		// Report what the hardware holds, not what was asked: a mixer may
		// round to its own steps.
		level, err := spk.Volume(ctx)
		if err != nil {
			return volumeResult{}, fail(txt.volumeReadFailed, err)
		}
		return volumeResult{Status: protocol.StatusSuccess, Message: fmt.Sprintf(txt.volumeSet, level), Level: level}, nil
	})
	if err != nil {
		return nil, err
	}
	t.Resources = []string{ResourceSpeaker}
	return t, describe(t, "level", txt.volumeLevel)
}
