package localtools_test

import (
	"encoding/json"
	"fmt"

	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/tools"
)

// Register the local tools with a SearXNG instance for search_web. Without
// Search, search_web answers every call with an error that says how to
// configure it.
func ExampleRegister() {
	searx, err := localtools.NewSearXNG(&localtools.SearXNGOptions{BaseURL: "http://127.0.0.1:8888"})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := tools.NewRegistry()
	if err := localtools.Register(r, &localtools.Options{Search: searx}); err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range r.Declarations() {
		fmt.Println(d.Name, d.MainType, d.SubType, d.Parameters.Required)
	}
	// Output:
	// calculate local query [expression]
	// guide_user_detail local query [query]
	// split_query_to_dimension local query [query]
	// search_web local query [query]
}

func ExampleCalculate() {
	for _, expr := range []string{"add 5 and 10", "3*(4+5)", "2的3次方", "2^64", "1/3", "一千零十加五", "1/(2-2)", "9^9^9^9"} {
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
	// 2^64 -> {"result":18446744073709551616,"operation":"power","numbers":[2,64]}
	// 1/3 -> {"result":0.33333333333333333333,"operation":"divide","numbers":[1,3],"approximate":true,"fraction":"1/3"}
	// 一千零十加五 -> {"result":1015,"operation":"add","numbers":[1010,5]}
	// 1/(2-2) -> division by zero (at position 2)
	// 9^9^9^9 -> result is too large: it has more than 1000 digits (at position 4)
}
