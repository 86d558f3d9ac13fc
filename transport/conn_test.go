package transport

import (
	"testing"

	"github.com/coder/websocket"
)

// TestNewConnLogsToSlog makes jsonrpc2 log (a response to no call) and
// checks the line reaches the slog logger at debug level, not stderr.
func TestNewConnLogsToSlog(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	logger, logs := newTestLogger()
	dialConn(t, srv.url(), &DialOptions{Logger: logger}, echoHandler(nil))
	c := srv.accept(t)

	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"nobody","result":1}`))
	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`))
	readFrame(t, c) // jsonrpc2 handled the response before this request

	if n := logs.Count("level=DEBUG", "component=jsonrpc2", `ignoring response #\"nobody\"`); n != 1 {
		t.Errorf("jsonrpc2's log line reached the logger %d times, want once; log:\n%s", n, logs)
	}
}
