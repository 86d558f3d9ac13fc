package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// registerID is the id of the doctor's mcp/registerTools.
const registerID = `"doctor-register"`

// checkRegistration registers s.MAC with no tools, as the device's Client-Id, and leaves: the
// server's answer says whether run's registrations are accepted and, when they are refused, why
// (data.details: a MAC bound to another client, a limit), which the device's log alone used not
// to tell.
func checkRegistration(ctx context.Context, s *Server) Result {
	r := Result{Name: "register", Detail: fmt.Sprintf("the server accepts %s as this device", s.MAC)}
	if s.ClientID == "" {
		r.Detail += " (no Client-Id: run has not kept one yet)"
	}
	header := http.Header{}
	header.Set("Device-Id", s.MAC)
	header.Set("User-Agent", s.UserAgent)
	if s.ClientID != "" {
		header.Set("Client-Id", s.ClientID)
	}
	stream, err := transport.Dial(ctx, s.URL, &transport.DialOptions{
		Header: header, Token: s.Token, TLSConfig: s.TLS, HandshakeTimeout: s.HandshakeTimeout, PingInterval: -1,
	})
	if err != nil {
		r.Err, r.Remedy = err, "the handshake passed a moment ago: is the server restarting?"
		return r
	}
	defer stream.Close()
	// Read blocks until a frame comes: the timeout closes the stream to end it.
	rctx, cancel := context.WithTimeout(ctx, s.HandshakeTimeout)
	defer cancel()
	closed := make(chan struct{})
	stop := context.AfterFunc(rctx, func() {
		stream.Close()
		close(closed)
	})
	defer func() {
		if !stop() {
			<-closed
		}
	}()
	params := protocol.RegisterParams[[]any]{MAC: s.MAC, Tools: []any{}}
	if err := stream.WriteRequest(json.RawMessage(registerID), protocol.MethodRegisterTools, params); err != nil {
		r.Err, r.Remedy = err, "the server closed the line at once: see its log"
		return r
	}
	for {
		m, err := stream.Read()
		if err != nil {
			if rctx.Err() != nil {
				err = fmt.Errorf("no answer to mcp/registerTools within %s", s.HandshakeTimeout)
			}
			r.Err, r.Remedy = err, "is server.url a devicectl agent server (or one that speaks seed 002)? see its log"
			return r
		}
		if m.Kind != transport.KindResponse || string(m.ID) != registerID {
			continue
		}
		if m.Error == nil {
			return r
		}
		r.Err = errors.New("refused: " + refusal(m))
		r.Remedy = "run is refused the same way, and retries until the server's reason above is dealt with"
		return r
	}
}

// refusal is a registration's error answer: code, message and data.details when there is one.
func refusal(m *transport.Message) string {
	s := fmt.Sprintf("%d %s", m.Error.Code, m.Error.Message)
	var data struct {
		Details string `json:"details"`
	}
	if m.Error.Data != nil && json.Unmarshal(*m.Error.Data, &data) == nil && data.Details != "" {
		s += ": " + data.Details
	}
	return s
}
