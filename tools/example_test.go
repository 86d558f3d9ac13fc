package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/devicectl/devicectl/tools"
)

func ExampleFunc() {
	type volumeInput struct {
		Level int `json:"level" jsonschema:"target volume: 0 is mute, 100 is loudest" tool:"min=0,max=100"`
	}
	type volumeResult struct {
		Status string `json:"status"`
		Level  int    `json:"level"`
	}
	volume, err := tools.Func(tools.Declaration{
		Name:        "amplify_volume",
		Description: "Set the speaker volume. Call it when the user asks for louder, quieter or mute.",
		MainType:    tools.Remote,
		SubType:     tools.Control,
	}, func(ctx context.Context, in volumeInput) (volumeResult, error) {
		// A real tool drives a hal.Speaker here.
		return volumeResult{Status: "success", Level: in.Level}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	volume.Resources = []string{"speaker"}

	r := tools.NewRegistry()
	if err := r.Add(volume); err != nil {
		log.Fatal(err)
	}
	params, _ := json.Marshal(r.Declarations()[0].Parameters)
	fmt.Println(string(params))

	// What the device does with each mcp/tool/execute request:
	for _, input := range []string{`{"level":150}`, `{"level":80}`} {
		tool, err := r.Validate("amplify_volume", json.RawMessage(input))
		var pe *tools.ParamsError
		if errors.As(err, &pe) {
			fmt.Println("-32602:", pe.Details)
			continue
		}
		result, err := tool.Invoke(context.Background(), json.RawMessage(input))
		if err != nil {
			fmt.Println("-32000:", err)
			continue
		}
		out, _ := json.Marshal(result)
		fmt.Println("result:", string(out))
	}
	// Output:
	// {"type":"object","properties":{"level":{"type":"integer","description":"target volume: 0 is mute, 100 is loudest","minimum":0,"maximum":100}},"required":["level"],"additionalProperties":false}
	// -32602: tool_input.level: 150 is greater than the maximum 100
	// result: {"status":"success","level":80}
}
