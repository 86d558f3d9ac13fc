package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/devicectl/devicectl/agent"
)

// replyArtifactName names the one artifact a task's reply streams into.
const replyArtifactName = "reply"

// executor turns agent turns into A2A events for a2a-go's request handler; the same executor
// serves A2A 1.0 and, through a2av0, 0.3 clients.
type executor struct {
	run      Runner
	log      *slog.Logger
	maxTurns int    // the Runner's turn limit, for the details of a refusal
	turns    *turns // the turns in flight of both doors, for Cancel and Close
}

// errClosing is a message that arrives after Close.
var errClosing = fmt.Errorf("the server is shutting down: %w", a2a.ErrServerError)

var _ a2asrv.AgentExecutor = (*executor)(nil)

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

// requestOf reads the agent request out of an A2A message: its text parts, metadata.mac and
// metadata.user_id (the message's first, then the request's), and the context as the session.
func requestOf(ec *a2asrv.ExecutorContext) (agent.Request, error) {
	if ec.Message == nil {
		return agent.Request{}, invalidParams("Missing required parameter: message")
	}
	var texts []string
	for _, p := range ec.Message.Parts {
		if p != nil && p.Text() != "" {
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

// Execute runs one turn: the task (when new), working, the reply as artifact chunks, then
// completed with the reply as the status message, or failed with the error's text.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		req, err := requestOf(ec)
		if err != nil {
			yield(nil, err)
			return
		}
		// a2a-go runs executions detached from the HTTP request; Cancel and Close end them here.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		run, err := e.turns.start(string(ec.TaskID), cancel)
		switch {
		case errors.Is(err, errTurnBusy):
			// Running on the seed routes: the tasks are one table.
			yield(nil, a2a.NewError(a2a.ErrInvalidParams, err.Error()))
			return
		case err != nil:
			yield(nil, errClosing)
			return
		}
		defer e.turns.finish(string(ec.TaskID), run)

		// The agent accepts or refuses a turn at once; the planner may take seconds to its first
		// word, and the caller has the task and its working status meanwhile.
		t, err := startTurn(ctx, e.run, req)
		if err != nil {
			yield(nil, refusal(err, e.maxTurns))
			return
		}
		defer t.stop()

		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		artifact := a2a.NewArtifactID()
		streamed := false
		for ev := range t.events() {
			switch ev.Kind {
			case agent.EventChunk:
				if ev.Text == "" {
					continue
				}
				if !yield(artifactEvent(ec, artifact, ev.Text, streamed, false), nil) {
					return
				}
				streamed = true
			case agent.EventFinal:
				// A planner that did not stream still shows its reply as the artifact.
				if !streamed && ev.Text != "" && !yield(artifactEvent(ec, artifact, ev.Text, false, true), nil) {
					return
				}
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentMessage(ec, ev.Text)), nil)
				return
			case agent.EventError:
				if ctx.Err() != nil {
					// Canceled: Cancel reports the canceled state; on Close the next start marks it failed.
					return
				}
				e.log.Info("a2a: turn failed", "task", ec.TaskID, "err", ev.Err)
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentMessage(ec, ev.Err.Error())), nil)
				return
			}
		}
		if ctx.Err() == nil {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentMessage(ec, errNoFinal.Error())), nil)
		}
	}
}

// Cancel stops the task's turn, if one runs, and reports the task canceled.
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		e.turns.cancel(string(ec.TaskID))
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// artifactEvent is one piece of the reply: the first creates the artifact, the rest append.
func artifactEvent(ec *a2asrv.ExecutorContext, id a2a.ArtifactID, text string, appendTo, last bool) *a2a.TaskArtifactUpdateEvent {
	var ev *a2a.TaskArtifactUpdateEvent
	if appendTo {
		ev = a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(text))
	} else {
		ev = a2a.NewArtifactEvent(ec, a2a.NewTextPart(text))
		ev.Artifact.ID = id
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
