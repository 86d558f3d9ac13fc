//go:build devicectl_pprof

package main

import (
	"fmt"
	"net/http"
	_ "net/http/pprof" // its handlers, on http.DefaultServeMux
	"os"
)

// A binary built with -tags devicectl_pprof serves Go's profiles (net/http/pprof) on the address
// in DEVICECTL_PPROF, for the benchmarks that profile serve under load
// (internal/testing/benchserve, BENCHSERVE_PROFILE). Never in a release build: the tag is not
// set there, and the profiles are open to anyone who reaches the address.
func init() {
	addr := os.Getenv("DEVICECTL_PPROF")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			fmt.Fprintf(os.Stderr, "devicectl: DEVICECTL_PPROF %s: %v\n", addr, err)
		}
	}()
}
