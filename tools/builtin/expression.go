package builtin

import (
	"context"
	"fmt"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// The enum repeats hal.Expressions() because a struct tag is a constant;
// a test keeps the two equal.
type expressionInput struct {
	Expression hal.Expression `json:"expression" tool:"enum=close_eyes_smile|close_eyes|amazed|smile|cry|idle"`
}

type expressionResult struct {
	Status     string         `json:"status"` // "success"
	Message    string         `json:"message"`
	Expression hal.Expression `json:"expression"` // as read back from the face
}

func expressionTool(face hal.Face, txt *text) (*tools.Tool, error) {
	t, err := tools.Func(tools.Declaration{
		Name:        protocol.ToolExpression,
		Description: txt.expression,
		MainType:    tools.Remote,
		SubType:     tools.Control,
	}, func(ctx context.Context, in expressionInput) (expressionResult, error) {
		e, err := setAndRead(ctx, in.Expression, face.SetExpression, face.Expression,
			hal.ErrUnknownExpression, fmt.Sprintf(txt.expressionUnknown, in.Expression), txt.expressionSetFailed, txt.expressionReadFailed)
		if err != nil {
			return expressionResult{}, err
		}
		return expressionResult{Status: protocol.StatusSuccess, Message: fmt.Sprintf(txt.expressionSet, e), Expression: e}, nil
	})
	if err != nil {
		return nil, err
	}
	t.Resources = []string{ResourceFace}
	return t, describe(t, "expression", txt.expressionParam)
}
