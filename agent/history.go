package agent

import "sync"

// history keeps each session's last exchanges in memory, for TurnContext.History. It is bounded
// twice: perLen exchanges per session, and maxSessions sessions (the least recently used goes).
// The sessions are a list in the order of their last use, so that a turn that starts a session at
// the bound evicts in constant time: an A2A task that names no session starts one each.
type history struct {
	mu          sync.Mutex
	perLen      int
	maxSessions int
	sessions    map[string]*session
	lru         session // the list's sentinel: lru.next is the most recently used, lru.prev the least
}

type session struct {
	id         string
	exchanges  []Exchange
	prev, next *session
}

func newHistory(perLen, maxSessions int) *history {
	h := &history{perLen: perLen, maxSessions: maxSessions, sessions: make(map[string]*session)}
	h.lru.prev, h.lru.next = &h.lru, &h.lru
	return h
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
	h.touch(s)
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
		s = &session{id: id}
		h.sessions[id] = s
	} else {
		s.unlink()
	}
	h.pushFront(s)
	if len(s.exchanges) == h.perLen {
		copy(s.exchanges, s.exchanges[1:])
		s.exchanges = s.exchanges[:h.perLen-1]
	}
	s.exchanges = append(s.exchanges, e)
}

// touch makes s the most recently used.
func (h *history) touch(s *session) {
	s.unlink()
	h.pushFront(s)
}

func (h *history) pushFront(s *session) {
	s.prev, s.next = &h.lru, h.lru.next
	s.next.prev = s
	h.lru.next = s
}

func (s *session) unlink() {
	s.prev.next, s.next.prev = s.next, s.prev
	s.prev, s.next = nil, nil
}

// evict drops the least recently used session.
func (h *history) evict() {
	oldest := h.lru.prev
	if oldest == &h.lru {
		return
	}
	oldest.unlink()
	delete(h.sessions, oldest.id)
}
