package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/devicectl/devicectl/agent"
)

// replyArtifactName names the one artifact a task's reply streams into.
const replyArtifactName = "reply"

// executor turns agent turns into A2A events for a2a-go's request handler, the one path every
// turn of the front door takes: A2A 1.0, A2A 0.3 (through a2av0) and the seed routes.
type executor struct {
	run      Runner
	log      *slog.Logger
	maxTurns int    // the Runner's turn limit, for the details of a refusal
	turns    *turns // the turns in flight, for Cancel and Close
}

// errClosing is a message that arrives after Close.
var errClosing = fmt.Errorf("the server is shutting down: %w", a2a.ErrServerError)

var (
	_ a2asrv.AgentExecutor         = (*executor)(nil)
	_ a2asrv.AgentExecutionCleaner = (*executor)(nil)
)

func newExecutor(run Runner, maxTurns int, log *slog.Logger) *executor {
	return &executor{run: run, log: log, maxTurns: maxTurns, turns: newTurns()}
}

// refusal is the answer, on either door, to a turn the agent refused at once: -32602 naming
// the devices for want of one, -32603 naming agent.limits.turns past it (maxTurns; 0: the
// agent's words), else -32603.
func refusal(err error, maxTurns int) error {
	if device, ok := deviceDetails(err); ok {
		return invalidParams(device)
	}
	if errors.Is(err, agent.ErrTurnLimit) {
		details := err.Error()
		if maxTurns > 0 {
			details = turnLimitDetails(maxTurns)
		}
		return withDetails(a2a.ErrInternalError, details)
	}
	return fmt.Errorf("%w: the turn could not start: %w", a2a.ErrInternalError, err)
}

// requestOf reads the agent request out of an A2A message: its text parts that are not blank,
// joined, metadata.mac and metadata.user_id (the message's first, then the request's), and the
// context as the session.
func requestOf(ec *a2asrv.ExecutorContext) (agent.Request, error) {
	if ec.Message == nil {
		return agent.Request{}, invalidParams("Missing required parameter: message")
	}
	var texts []string
	for _, p := range ec.Message.Parts {
		if p != nil && strings.TrimSpace(p.Text()) != "" {
			texts = append(texts, p.Text())
		}
	}
	if len(texts) == 0 {
		return agent.Request{}, invalidParams("The message has no text part")
	}
	mac, err := metaString("mac", ec.Message.Metadata, ec.Metadata)
	if err != nil {
		return agent.Request{}, invalidParams(err.Error())
	}
	user, err := metaString("user_id", ec.Message.Metadata, ec.Metadata)
	if err != nil {
		return agent.Request{}, invalidParams(err.Error())
	}
	return agent.Request{Text: strings.Join(texts, "\n"), MAC: mac, UserID: user, SessionID: ec.ContextID, TaskID: string(ec.TaskID)}, nil
}

// Execute runs one turn: the task (when new) and working, the reply as artifact pieces, then
// completed with the reply as the status message, or failed with the error's text.
//
// A task stored before its turn (the seed routes store theirs, under the id they were given) is
// working already: it says so before the turn starts, and a turn the agent refuses ends it
// failed, saying why. A seed call that is quiet gets the outcome as one event, the task whole.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		call := seedCallFrom(ctx)
		call.began()
		req, err := requestOf(ec)
		if err != nil {
			yield(nil, err)
			return
		}
		// a2a-go runs executions detached from the HTTP request; Cancel and Close end them here.
		turnCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		run, err := e.turns.start(string(ec.TaskID), ec, cancel)
		switch {
		case errors.Is(err, errTurnBusy):
			yield(nil, invalidParams(busyDetails(ec.TaskID)))
			return
		case err != nil:
			yield(nil, errClosing)
			return
		}
		// Cleanup ends the turn's claim once a2a-go has stored what it yields.
		out := &outcome{ec: ec, call: call}
		stored := ec.StoredTask != nil
		if stored && !out.quiet() && !yield(out.working(), nil) {
			return
		}

		// The agent accepts or refuses a turn at once; the planner may take seconds to its first
		// word, and the caller has the task and its working status meanwhile.
		t, err := startTurn(turnCtx, e.run, req)
		if err != nil {
			refused := refusal(err, e.maxTurns)
			if !stored {
				yield(nil, refused)
				return
			}
			call.refuse(refused)
			yield(out.status(a2a.TaskStateFailed, errDetails(refused)), nil)
			return
		}
		defer t.stop()

		if !stored && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !stored && !yield(out.working(), nil) {
			return
		}
		for ev := range t.events() {
			switch ev.Kind {
			case agent.EventChunk:
				if ev.Text != "" && !out.piece(ev.Text, yield) {
					return
				}
			case agent.EventFinal:
				out.final(ev.Text, yield)
				return
			case agent.EventError:
				switch {
				case run.canceled():
					// Cancel reports the canceled state.
				case e.turns.closing():
					yield(out.status(a2a.TaskStateFailed, "The server is shutting down"), nil)
				case turnCtx.Err() != nil:
					// a2a-go stopped the execution: it has its outcome.
				default:
					e.log.Info("a2a: turn failed", "task", ec.TaskID, "err", ev.Err)
					why := ev.Err.Error()
					if details, ok := deviceDetails(ev.Err); ok {
						why = details
					}
					yield(out.status(a2a.TaskStateFailed, why), nil)
				}
				return
			}
		}
		if turnCtx.Err() == nil {
			yield(out.status(a2a.TaskStateFailed, errNoFinal.Error()), nil)
		}
	}
}

// Cancel stops the task's turn, if one runs, and reports the task canceled.
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		e.turns.cancel(string(ec.TaskID))
		out := &outcome{ec: ec, call: seedCallFrom(ctx)}
		yield(out.status(a2a.TaskStateCanceled, "The task was canceled"), nil)
	}
}

// Cleanup ends the claim Execute put on the task: a2a-go calls it once the execution's
// outcome is stored, so that whoever waits for the turn (Close, tests) finds it there.
func (e *executor) Cleanup(ctx context.Context, ec *a2asrv.ExecutorContext, result a2a.SendMessageResult, _ error) {
	e.turns.finish(string(ec.TaskID), ec)
	seedCallFrom(ctx).end(result)
}

// outcome builds the events of one turn's reply: it streams into one artifact, a piece per
// chunk, and the final reply, when the pieces do not already make it up, ends the artifact
// with lastChunk.
type outcome struct {
	ec       *a2asrv.ExecutorContext
	call     *seedCall
	artifact a2a.ArtifactID
	streamed strings.Builder
}

func (o *outcome) quiet() bool { return o.call.isQuiet() && o.ec.StoredTask != nil }

// status is a status update of the task with a message from the agent ("": none). On a seed
// call its timestamp is left to the store, which stamps the status as it stores it: the seed
// routes' times are the store's clock (Options.Now), read once per state change.
func (o *outcome) status(state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	ev := a2a.NewStatusUpdateEvent(o.ec, state, agentMessage(o.ec, text))
	if o.call != nil {
		ev.Status.Timestamp = nil
	}
	return ev
}

// working is the working status; a task stored working keeps the time it was stored at.
func (o *outcome) working() *a2a.TaskStatusUpdateEvent {
	ev := o.status(a2a.TaskStateWorking, "")
	if t := o.ec.StoredTask; t != nil && t.Status.State == a2a.TaskStateWorking && t.Status.Timestamp != nil {
		at := *t.Status.Timestamp
		ev.Status.Timestamp = &at
	}
	return ev
}

// piece yields a chunk of the reply, or keeps it for the end when the call is quiet.
func (o *outcome) piece(text string, yield func(a2a.Event, error) bool) bool {
	appendTo := o.streamed.Len() > 0
	o.streamed.WriteString(text)
	if o.quiet() {
		return true
	}
	return yield(o.artifactEvent(text, appendTo, false), nil)
}

// final yields the end of a completed turn. The reply is the final text, or the pieces when it
// has none; pieces that are not the reply are replaced.
func (o *outcome) final(text string, yield func(a2a.Event, error) bool) {
	streamed := o.streamed.String()
	if text == "" {
		text = streamed
	}
	if o.quiet() {
		yield(o.finalTask(text), nil)
		return
	}
	switch {
	case text == "" || text == streamed:
	case streamed != "" && strings.HasPrefix(text, streamed):
		if !yield(o.artifactEvent(text[len(streamed):], true, true), nil) {
			return
		}
	default:
		if !yield(o.artifactEvent(text, false, true), nil) {
			return
		}
	}
	yield(o.status(a2a.TaskStateCompleted, text), nil)
}

// finalTask is the stored task completed with the reply, for a quiet call: one event, one
// store write, where the reply's pieces would be one each.
func (o *outcome) finalTask(text string) *a2a.Task {
	t := *o.ec.StoredTask
	if text != "" {
		t.Artifacts = append(slices.Clip(t.Artifacts),
			&a2a.Artifact{ID: a2a.NewArtifactID(), Name: replyArtifactName, Parts: []*a2a.Part{a2a.NewTextPart(text)}})
	}
	t.Status = o.status(a2a.TaskStateCompleted, text).Status
	return &t
}

// artifactEvent is one piece of the reply: the first creates the artifact (or replaces it),
// the rest append.
func (o *outcome) artifactEvent(text string, appendTo, last bool) *a2a.TaskArtifactUpdateEvent {
	var ev *a2a.TaskArtifactUpdateEvent
	if appendTo {
		ev = a2a.NewArtifactUpdateEvent(o.ec, o.artifact, a2a.NewTextPart(text))
	} else {
		if o.artifact == "" {
			o.artifact = a2a.NewArtifactID()
		}
		ev = a2a.NewArtifactEvent(o.ec, a2a.NewTextPart(text))
		ev.Artifact.ID = o.artifact
		ev.Artifact.Name = replyArtifactName
	}
	ev.LastChunk = last
	return ev
}

func agentMessage(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	if text == "" {
		return nil
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}
