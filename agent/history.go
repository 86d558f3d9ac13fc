package agent

import "sync"

// history keeps each session's last exchanges in memory, for TurnContext.History. It is bounded
// twice: perLen exchanges per session, and maxSessions sessions (the least recently used goes).
type history struct {
	mu          sync.Mutex
	perLen      int
	maxSessions int
	clock       uint64 // counts uses, for least-recently-used eviction
	sessions    map[string]*session
}

type session struct {
	exchanges []Exchange
	used      uint64
}

func newHistory(perLen, maxSessions int) *history {
	return &history{perLen: perLen, maxSessions: maxSessions, sessions: make(map[string]*session)}
}

// get returns a copy of the session's exchanges, oldest first; none for id "".
func (h *history) get(id string) []Exchange {
	if id == "" || h.perLen == 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[id]
	if s == nil {
		return nil
	}
	h.clock++
	s.used = h.clock
	return append([]Exchange(nil), s.exchanges...)
}

// add appends an exchange to the session; a turn without a session id keeps none.
func (h *history) add(id string, e Exchange) {
	if id == "" || h.perLen == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[id]
	if s == nil {
		if len(h.sessions) >= h.maxSessions {
			h.evict()
		}
		s = &session{}
		h.sessions[id] = s
	}
	h.clock++
	s.used = h.clock
	if len(s.exchanges) == h.perLen {
		copy(s.exchanges, s.exchanges[1:])
		s.exchanges = s.exchanges[:h.perLen-1]
	}
	s.exchanges = append(s.exchanges, e)
}

// evict drops the least recently used session. A scan, but only when a new session arrives at the
// bound.
func (h *history) evict() {
	var oldest string
	var at uint64
	first := true
	for id, s := range h.sessions {
		if first || s.used < at {
			oldest, at, first = id, s.used, false
		}
	}
	delete(h.sessions, oldest)
}
