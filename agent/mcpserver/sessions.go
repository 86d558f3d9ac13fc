package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

// Defaults of Options.MaxSessions and Options.SessionIdle (agent.limits.mcp_sessions and
// agent.limits.mcp_session_idle).
const (
	DefaultMaxSessions = 256
	DefaultSessionIdle = 10 * time.Minute
)

// sessionHeader is the Streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// sessions bounds the open MCP sessions. Past Options.MaxSessions, a request that opens a
// session (initialize, a POST without Mcp-Session-Id) closes the session unused longest to make
// room; that host gets 404 on its next request and, as the transport says, starts a new session.
// Closing the idlest rather than refusing the newcomer keeps the server usable when hosts vanish
// without ending their sessions. Only when every session has a request running is the newcomer
// refused (503). The SDK closes a session idle for Options.SessionIdle by itself. A session's
// use is its POSTs (requests, notifications, answers); its GET stream is only listened on.
type sessions struct {
	s   *Server
	max int

	mu       sync.Mutex
	lastUsed map[string]time.Time // by session ID: when its last POST began or ended
	running  map[string]int       // by session ID: its POSTs running now
	opening  int                  // requests opening a session now, counted against max
}

func newSessions(s *Server, max int) *sessions {
	return &sessions{s: s, max: max, lastUsed: map[string]time.Time{}, running: map[string]int{}}
}

// limit is the HTTP middleware that keeps the count.
func (ss *sessions) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionHeader)
		// A GET is a stream a host listens on, not a use: idleness counts from the last POST,
		// as the SDK's SessionTimeout does. Without a session, the SDK answers it.
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if id != "" {
			ss.begin(id)
			defer ss.end(id)
			next.ServeHTTP(w, r)
			return
		}
		// Only initialize opens a session; other requests without one (a newer protocol's
		// sessionless requests) are served and forgotten by the SDK.
		if !initializes(r) {
			next.ServeHTTP(w, r)
			return
		}
		if err := ss.reserve(); err != nil {
			ss.s.log.Warn("refused a new MCP session", "err", err)
			w.Header().Set("Retry-After", "10")
			writeRPCError(w, http.StatusServiceUnavailable, protocol.CodeServerError, "Server busy", err.Error())
			return
		}
		next.ServeHTTP(w, r)
		ss.opened(w.Header().Get(sessionHeader))
	})
}

func (ss *sessions) begin(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, known := ss.lastUsed[id]; !known {
		return // not a session of ours (gone, or never was): the SDK answers 404
	}
	ss.running[id]++
	ss.lastUsed[id] = time.Now()
}

func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running[id] == 0 {
		return
	}
	if ss.running[id]--; ss.running[id] == 0 {
		delete(ss.running, id)
	}
	if _, known := ss.lastUsed[id]; known {
		ss.lastUsed[id] = time.Now()
	}
}

// reserve counts a session about to open, first closing the idlest sessions while the open ones
// and those opening would be over max.
func (ss *sessions) reserve() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	live := map[string]bool{}
	for s := range ss.s.mcp.Sessions() {
		live[s.ID()] = true
	}
	for id := range ss.lastUsed { // closed by the SDK (idle, DELETE) or by a host
		if !live[id] {
			delete(ss.lastUsed, id)
			delete(ss.running, id)
		}
	}
	// A session being opened is live but not yet in lastUsed: opening counts it.
	for len(ss.lastUsed)+ss.opening >= ss.max {
		idlest, since := "", time.Time{}
		for id, at := range ss.lastUsed {
			if ss.running[id] == 0 && (idlest == "" || at.Before(since)) {
				idlest, since = id, at
			}
		}
		if idlest == "" {
			return fmt.Errorf("the server has %d MCP sessions open or opening (agent.limits.mcp_sessions is %d), each with a request running: try again when one ends", len(ss.lastUsed)+ss.opening, ss.max)
		}
		for s := range ss.s.mcp.Sessions() {
			if s.ID() == idlest {
				s.Close()
			}
		}
		delete(ss.lastUsed, idlest)
		ss.s.log.Info("closed the MCP session unused longest to open another", "limit", "agent.limits.mcp_sessions", "max", ss.max, "session", idlest, "unused", time.Since(since).Round(time.Millisecond))
	}
	ss.opening++
	return nil
}

// opened ends a reservation: id is the session opened, "" if none was.
func (ss *sessions) opened(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.opening--
	if id == "" {
		return
	}
	for s := range ss.s.mcp.Sessions() {
		if s.ID() == id { // still open: the initialize succeeded
			ss.lastUsed[id] = time.Now()
			return
		}
	}
}

// initializes reports whether a POST's body, which parseErrors has read into memory, is an
// initialize request (or a batch holding one).
func initializes(r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var one struct{ Method string }
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []struct{ Method string }
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
	}
	return false
}
