package transport

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
)

// NewConn wraps jsonrpc2.NewConn with a logger that goes to logger at debug
// level (nil discards), never to jsonrpc2's default of stderr. opts are
// applied after that, so a jsonrpc2.LogMessages or jsonrpc2.SetLogger among
// them wins. The Conn owns s: close the Conn, not the Stream.
func NewConn(ctx context.Context, s *Stream, h jsonrpc2.Handler, logger *slog.Logger, opts ...jsonrpc2.ConnOpt) *jsonrpc2.Conn {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	all := make([]jsonrpc2.ConnOpt, 0, 1+len(opts))
	all = append(all, jsonrpc2.SetLogger(slogPrintf{logger.With("component", "jsonrpc2")}))
	all = append(all, opts...)
	return jsonrpc2.NewConn(ctx, s, h, all...)
}

// slogPrintf adapts a *slog.Logger to jsonrpc2.Logger. jsonrpc2 logs what it
// ignores (a response to no call) and why it closed; both are debug matters.
type slogPrintf struct{ l *slog.Logger }

func (p slogPrintf) Printf(format string, v ...any) {
	ctx := context.Background()
	if !p.l.Enabled(ctx, slog.LevelDebug) {
		return // skip the formatting
	}
	p.l.DebugContext(ctx, strings.TrimSpace(fmt.Sprintf(format, v...)))
}
