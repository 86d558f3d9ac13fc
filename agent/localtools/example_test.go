package localtools_test

import (
	"encoding/json"
	"fmt"

	"github.com/devicectl/devicectl/agent/localtools"
)

func ExampleCalculate() {
	for _, expr := range []string{"add 5 and 10", "3*(4+5)", "2的3次方", "1/(2-2)"} {
		c, err := localtools.Calculate(expr)
		if err != nil {
			fmt.Println(expr, "->", err)
			continue
		}
		b, _ := json.Marshal(c)
		fmt.Println(expr, "->", string(b))
	}
	// Output:
	// add 5 and 10 -> {"result":15,"operation":"add","numbers":[5,10]}
	// 3*(4+5) -> {"result":27,"operation":"expression","numbers":[3,4,5]}
	// 2的3次方 -> {"result":8,"operation":"power","numbers":[2,3]}
	// 1/(2-2) -> division by zero (at position 2)
}
