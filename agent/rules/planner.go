package rules

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/devicectl/devicectl/agent"
)

// Options configures a Planner. The zero value is usable; a nil *Options is the zero value.
type Options struct {
	// Step is how much "louder" or "quieter" changes the volume, in percent; 0 means 10.
	Step int
	// MaxSessions bounds how many sessions' state (the memory "forget that" refers to) is
	// kept; the least recently used is dropped first. 0 means 1024.
	MaxSessions int
	// Location is the time zone clock times are said in (agent.timezone); nil is time.Local.
	Location *time.Location
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Planner is the built-in rule planner. It is safe for concurrent use by many turns.
type Planner struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*list.Element // of *session, most recent at the front
	lru      *list.List
}

var _ agent.Planner = (*Planner)(nil)

// New returns a rule planner.
func New(opts *Options) *Planner {
	var o Options
	if opts != nil {
		o = *opts // the caller's struct is never modified
	}
	if o.Step <= 0 {
		o.Step = 10
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 1024
	}
	return &Planner{opts: o, sessions: make(map[string]*list.Element), lru: list.New()}
}

// session is what the planner remembers of a session between turns: only the memory that
// "forget that" would delete.
type session struct {
	id  string
	ref *memoryRef
}

// memoryRef is a memory the session added or found last.
type memoryRef struct {
	id      any    // as the memory tool gave it: a string, or a json.Number
	content string // what it says, to name it when it is deleted
}

// lastMemory returns the memory the session last added or found, or nil.
func (p *Planner) lastMemory(sessionID string) *memoryRef {
	if sessionID == "" {
		return nil // "" is a fresh session each turn: nothing carries over
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.sessions[sessionID]; ok {
		p.lru.MoveToFront(e)
		return e.Value.(*session).ref
	}
	return nil
}

// setLastMemory records the memory "forget that" refers to now; nil forgets the reference.
func (p *Planner) setLastMemory(sessionID string, ref *memoryRef) {
	if sessionID == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.sessions[sessionID]; ok {
		e.Value.(*session).ref = ref
		p.lru.MoveToFront(e)
		return
	}
	if ref == nil {
		return
	}
	p.sessions[sessionID] = p.lru.PushFront(&session{id: sessionID, ref: ref})
	for p.lru.Len() > p.opts.MaxSessions {
		old := p.lru.Back()
		p.lru.Remove(old)
		delete(p.sessions, old.Value.(*session).id)
	}
}

// Plan reads the request, calls the tools it asks for in the order they were asked, and
// streams a reply in the language of the request. It returns an error only when the turn
// cannot go on: the device is gone or the turn's context is done.
func (p *Planner) Plan(ctx context.Context, t agent.TurnContext) error {
	req := t.Request()
	r := &turn{
		p:    p,
		ctx:  ctx,
		t:    t,
		req:  req,
		zh:   isChinese(req.Text),
		decl: indexTools(t.Tools()),
	}
	intents := parse(req.Text)
	r.several = len(intents) > 1
	for _, in := range intents {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.do(in); err != nil {
			return err
		}
	}
	return nil
}
