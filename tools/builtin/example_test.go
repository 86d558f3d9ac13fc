package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/devicectl/devicectl/hal/haltest"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/builtin"
)

func ExampleRegister() {
	r := tools.NewRegistry()
	err := builtin.Register(r, &builtin.Options{
		Speaker:  &haltest.Speaker{Level: 50}, // a real device passes hal/sim or a hardware backend
		Face:     &haltest.Face{},
		Language: "en",
		Version:  "1.0.0",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range r.Tools() {
		fmt.Println(t.Name, t.SubType, t.Resources)
	}

	input := json.RawMessage(`{"level":80}`)
	tool, err := r.Validate("amplify_volume", input)
	if err != nil {
		log.Fatal(err)
	}
	result, err := tool.Invoke(context.Background(), input)
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
	// Output:
	// amplify_volume control [speaker]
	// set_virtual_human_expression control [face]
	// get_device_status query [face speaker]
	// {"status":"success","message":"Volume set to 80","level":80}
}
