package a2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Seed 004's routes are a shape adapter over a2a-go's request handler, the one the A2A paths
// use: a seed request becomes a SendMessage, SendStreamingMessage, GetTask or CancelTask call,
// and its result or events go back in the seed's shapes (seed_view.go). Turns run in the one
// executor, tasks live in the one store, cancel and Close take the one path.
//
// Two things a2a-go does not do, the seed needs: a task created under the id the client gives,
// and a finished task taking another message. So the adapter stores the task working, with the
// message, before it hands the message to a2a-go (startSeedTask), and puts it back if the turn
// does not run after all (putBack).

// Seed 004's methods, one endpoint each; /tasks/send also answers tasks/get and tasks/cancel so
// that a seed-route client can follow and stop its tasks.
const (
	methodSend   = "tasks/send"
	methodStream = "tasks/send/stream"
	methodGet    = "tasks/get"
	methodCancel = "tasks/cancel"
)

// seedCall rides in the context of a seed request through a2a-go to the executor, which
// tells it what a2a-go's answer does not: that the agent refused the turn, and the task as
// stored at its end.
type seedCall struct {
	quiet bool // tasks/send: the caller waits for the outcome, not the pieces of the reply

	mu      sync.Mutex
	refused error         // the agent refused the turn: why
	ended   chan struct{} // made when the executor takes the message, closed at its Cleanup
	task    *a2a.Task     // the execution's outcome, as stored
}

type seedCallKey struct{}

func withSeedCall(ctx context.Context, c *seedCall) context.Context {
	return context.WithValue(ctx, seedCallKey{}, c)
}

// seedCallFrom is the seed call ctx carries; nil on the A2A paths.
func seedCallFrom(ctx context.Context) *seedCall {
	c, _ := ctx.Value(seedCallKey{}).(*seedCall)
	return c
}

func (c *seedCall) isQuiet() bool { return c != nil && c.quiet }

func (c *seedCall) refuse(err error) {
	if c != nil {
		c.mu.Lock()
		c.refused = err
		c.mu.Unlock()
	}
}

func (c *seedCall) refusal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// began marks the executor taking the message: its outcome will come.
func (c *seedCall) began() {
	if c != nil {
		c.mu.Lock()
		c.ended = make(chan struct{})
		c.mu.Unlock()
	}
}

// end gives the execution's outcome, once a2a-go has stored it.
func (c *seedCall) end(result a2a.SendMessageResult) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended != nil && c.task == nil {
		c.task, _ = result.(*a2a.Task)
		close(c.ended)
	}
}

// outcome is the task as the turn left it stored, waited for; nil when no turn ran.
func (c *seedCall) outcome() *a2a.Task {
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended == nil {
		return nil
	}
	<-ended
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.task
}

// serveSeedSend answers POST /tasks/send: tasks/send runs a turn and answers the task once the
// turn is over; tasks/get and tasks/cancel read and stop tasks.
func (h *Handler) serveSeedSend(w http.ResponseWriter, r *http.Request) {
	env, err := readEnvelope(w, r)
	var result any
	if err == nil {
		result, err = h.seedMethod(r.Context(), env)
	}
	if err != nil {
		writeRPCError(w, http.StatusOK, env.ID, seedError(err))
		return
	}
	writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: env.ID, Result: result})
}

func (h *Handler) seedMethod(ctx context.Context, env *envelope) (*seedTask, error) {
	switch env.Method {
	case methodSend:
		p, err := parseSendParams(env.Params)
		if err != nil {
			return nil, err
		}
		return h.seedSend(ctx, p)
	case methodGet, methodCancel:
		id, historyLength, err := parseTaskIDParams(env.Params)
		if err != nil {
			return nil, err
		}
		var t *a2a.Task
		if env.Method == methodGet {
			t, err = h.seedGet(ctx, id)
		} else {
			t, err = h.seedCancel(ctx, id)
		}
		if err != nil {
			return nil, err
		}
		return seedView(t, historyLength), nil
	}
	return nil, withDetails(a2a.ErrMethodNotFound, fmt.Sprintf("Method not found: %q (%s serves %s, %s and %s)",
		env.Method, PathSeedSend, methodSend, methodGet, methodCancel))
}

// serveSeedGet answers GET /tasks/{id} with the bare task, or 404 and a -32602.
func (h *Handler) serveSeedGet(w http.ResponseWriter, r *http.Request) {
	t, err := h.seedGet(r.Context(), a2a.TaskID(r.PathValue("id")))
	if err != nil {
		e := seedError(err)
		status := http.StatusInternalServerError
		if e.Code == codeInvalidParams {
			status = http.StatusNotFound
		}
		writeRPCError(w, status, nil, e)
		return
	}
	writeJSON(w, http.StatusOK, seedView(t, nil))
}

// seedGet reads a task through the request handler.
func (h *Handler) seedGet(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	t, err := h.rh.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil && !errors.Is(err, a2a.ErrTaskNotFound) {
		return nil, withDetails(a2a.ErrInternalError, fmt.Sprintf("Could not read task %s: %v", id, err))
	}
	return t, err
}

// seedCancel stops a running task and answers it stored canceled; a finished task cannot be
// canceled, not even one canceled already (a2a-go would answer it as it is).
func (h *Handler) seedCancel(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	t, err := h.seedGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Status.State.Terminal() {
		return nil, invalidParams(fmt.Sprintf("Task %s is %s and cannot be canceled", id, seedState(t.Status.State)))
	}
	return h.rh.CancelTask(withSeedCall(ctx, &seedCall{}), &a2a.CancelTaskRequest{ID: id})
}

// seedSend runs a tasks/send and answers the task once its turn is over. A turn the agent
// refuses (no such device, past the turn limit) is an error, and the task is as it was.
func (h *Handler) seedSend(ctx context.Context, p *seedParams) (*seedTask, error) {
	run, err := h.startSeedTask(ctx, p)
	if err != nil {
		return nil, err
	}
	call := &seedCall{quiet: true}
	// The outcome is waited for whether or not the client stays: the task outlives its request.
	ctx = withSeedCall(context.WithoutCancel(ctx), call)
	_, err = h.rh.SendMessage(ctx, run.request())
	if refused := call.refusal(); refused != nil {
		err = refused
	}
	if err != nil {
		h.putBack(ctx, run)
		return nil, err
	}
	// As stored, its status with the time it was stored at, which a2a-go's answer lacks.
	t := call.outcome()
	if t == nil {
		if t, err = h.seedGet(ctx, run.task.ID); err != nil {
			return nil, err
		}
	}
	return seedView(t, p.HistoryLength), nil
}
