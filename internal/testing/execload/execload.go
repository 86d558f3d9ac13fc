package execload

import (
	"encoding/json"
	"fmt"
	"time"
)

// Window is how many executes Pipeline keeps outstanding: the device's default bound on calls in
// flight (device.Options.MaxInFlight), as a server that respects it would. More would be
// answered -32002 (busy), which is cheap and would flatter the device.
const Window = 8

// Frame is the i-th execute of a load: amplify_volume to level i%101, with the id tool-call-i.
func Frame(i int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":%d}},"id":"tool-call-%d"}`, i%101, i)
}

// Served returns nil if answer is a response carrying a result, or says why it is not one: a
// call the device refused (busy, say) was not served, and must not count as one.
func Served(answer []byte) error {
	var m struct{ Result, Error json.RawMessage }
	if err := json.Unmarshal(answer, &m); err != nil || m.Result == nil || m.Error != nil {
		return fmt.Errorf("answer %s is not a result", answer)
	}
	return nil
}

// Pipeline keeps Window requests outstanding, sending frame(i) with send as each answer arrives
// (read with recv, on a goroutine of its own), until n answers were read and Served; it returns
// how long that took. It stops at the first error of send or recv, or the first answer not
// served, and returns it; it returns only once the reading has stopped, so recv must fail once
// the line is gone.
func Pipeline(n int, frame func(i int) []byte, send func([]byte) error, recv func() ([]byte, error)) (time.Duration, error) {
	start := time.Now()
	window := make(chan struct{}, Window)
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(stop)
		for range n {
			answer, err := recv()
			if err == nil {
				err = Served(answer)
			}
			if err != nil {
				errc <- err
				return
			}
			<-window
		}
		errc <- nil
	}()
	for i := range n {
		select {
		case window <- struct{}{}:
		case <-stop:
			return 0, <-errc
		}
		if err := send(frame(i)); err != nil {
			<-stop
			return 0, err
		}
	}
	err := <-errc
	return time.Since(start), err
}
