package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"syscall"
	"time"
)

// ErrNoDaemon is a socket nobody serves: the path does not exist, or nothing accepts on it
// (a file a killed daemon left behind).
var ErrNoDaemon = errors.New("no daemon listens there")

// MaxResponse bounds the response line a client reads.
const MaxResponse = 16 << 20

// Call sends req to the daemon listening at path and returns its response: a result, or the
// JSON-RPC error the device answered with (Response.Error). An error wrapping ErrNoDaemon says
// nothing serves the path; any other error is a daemon that could not be reached or answered
// wrongly. Cancelling ctx abandons the call (the daemon still runs it to its end).
func Call(ctx context.Context, path string, req *Request) (*Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("control socket %s: %w (%w)", path, ErrNoDaemon, err)
		}
		return nil, fmt.Errorf("connecting to the daemon's control socket %s: %w", path, err)
	}
	defer conn.Close()
	// A done ctx ends a read or write in progress.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()

	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	// A daemon that refuses at once (too many clients) may have hung up before the request is
	// written: its answer is still there to read, and says more than the failed write.
	_, werr := conn.Write(append(b, '\n'))
	line, err := bufio.NewReader(io.LimitReader(conn, MaxResponse)).ReadBytes('\n')
	if err != nil && werr != nil {
		return nil, fmt.Errorf("sending the request to %s: %w", path, orCtx(ctx, werr))
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the daemon hung up without a whole answer
		}
		return nil, fmt.Errorf("reading the answer from %s: %w", path, orCtx(ctx, err))
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("the answer from %s is not a JSON-RPC response: %w", path, err)
	}
	if resp.JSONRPC != "2.0" || (resp.Error == nil) == (resp.Result == nil) {
		return nil, fmt.Errorf("the answer from %s is not a JSON-RPC 2.0 response with a result or an error: %.200s", path, line)
	}
	return &resp, nil
}

// orCtx prefers ctx's error to the deadline error its cancellation caused.
func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
