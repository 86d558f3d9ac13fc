// Command floor is the process-level floor of devicectl's benchmarks: the least a device program
// could be. It dials the agent server on the same WebSocket library as devicectl, sends the
// mcp/registerTools request it is given, byte for byte, and answers every request after that with
// an empty result. It ignores responses and notifications, keeps no tools and validates nothing.
//
//	floor -server ws://127.0.0.1:8080/ -register registration.json
//
// SIGINT or SIGTERM ends it with exit 0.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/coder/websocket"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run() error {
	server := flag.String("server", "", "agent server address, ws://host:port/path")
	register := flag.String("register", "", "file holding the mcp/registerTools request to send")
	flag.Parse()
	if *server == "" || *register == "" {
		flag.Usage()
		os.Exit(2)
	}
	reg, err := os.ReadFile(*register)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	c, _, err := websocket.Dial(ctx, *server, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return err
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	if err := c.Write(ctx, websocket.MessageText, reg); err != nil {
		return err
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil || websocket.CloseStatus(err) != -1 {
				return nil // stopped, or the server closed the line
			}
			return err
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("frame %q: %w", b, err)
		}
		if m.ID == nil || m.Method == "" {
			continue // a notification, or the answer to the registration
		}
		resp := append(append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...), `,"result":{}}`...)
		if err := c.Write(ctx, websocket.MessageText, resp); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
	}
}
