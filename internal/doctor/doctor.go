// Package doctor holds the checks of `devicectl doctor`: each step of the way to the server
// (name, port, certificate, WebSocket handshake with the device's headers and token) and each
// part of the hardware, opened and read back, as a row of OK, WARN or FAIL with what to do about
// a problem. The command gathers from the config what the server's checks need; Hardware reads
// the hardware section itself and opens each part through the driver the program registered.
package doctor

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Result is one row of the doctor's table.
type Result struct {
	Name   string
	Detail string // what was found, on success
	Warn   string // on success: what works but should be fixed (the row says WARN)
	Err    error  // what failed
	Remedy string // what to do about Err, or about Warn
}

// Failed reports whether any of results failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Err != nil {
			return true
		}
	}
	return false
}

// Print writes results as a table: name, OK/WARN/FAIL, what was found or went wrong, and below a
// problem the remedy.
func Print(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range results {
		switch {
		case r.Err == nil && r.Warn == "":
			fmt.Fprintf(tw, "%s\tOK\t%s\n", r.Name, r.Detail)
			continue
		case r.Err == nil:
			fmt.Fprintf(tw, "%s\tWARN\t%s\n", r.Name, r.Warn)
		default:
			fmt.Fprintf(tw, "%s\tFAIL\t%v\n", r.Name, r.Err)
		}
		if r.Remedy != "" {
			fmt.Fprintf(tw, "\t\t-> %s\n", r.Remedy)
		}
	}
	return tw.Flush()
}
