package a2a

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// seedRun is a seed message accepted for a turn: its task stored working with the message.
type seedRun struct {
	msg   *a2a.Message
	meta  map[string]any
	task  *a2a.Task // as stored
	prior *a2a.Task // the task before the message; nil when it is new
}

func (r *seedRun) request() *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: r.msg, Metadata: r.meta}
}

// startSeedTask checks a seed message against its task and stores the task working with it:
// a new one under the id asked for (or one of the handler's), or a finished one of the same
// session taken up again, its reply moved into its history.
func (h *Handler) startSeedTask(ctx context.Context, p *seedParams) (*seedRun, error) {
	msg := &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, Parts: p.Parts}
	if err := checkMessageSize(msg, h.messageBytes()); err != nil {
		return nil, err
	}
	named := p.ID != ""
	if !named {
		p.ID = a2a.TaskID(h.o.NewID())
	}
	if p.SessionID == "" {
		p.SessionID = h.o.NewID()
	}
	msg.TaskID, msg.ContextID = p.ID, p.SessionID
	run := &seedRun{msg: msg, meta: p.Metadata}
	task := &a2a.Task{ID: p.ID, ContextID: p.SessionID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, Metadata: p.Metadata}

	// A task the client did not name is new: its id is one of the handler's, never given before
	// (and Create refuses one that exists all the same).
	var st *taskstore.StoredTask
	err := a2a.ErrTaskNotFound
	if named {
		st, err = h.tasks.Get(ctx, p.ID)
	}
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
	case err != nil:
		return nil, withDetails(a2a.ErrInternalError, fmt.Sprintf("Could not read task %s: %v", p.ID, err))
	case st.Task.ContextID != p.SessionID:
		return nil, invalidParams(fmt.Sprintf("Task %s belongs to session %s, not %s", p.ID, st.Task.ContextID, p.SessionID))
	case !st.Task.Status.State.Terminal():
		return nil, invalidParams(busyDetails(p.ID)) // running, on either door: the tasks are one table
	default:
		run.prior = st.Task
		task.History, task.Artifacts = transcript(st.Task), st.Task.Artifacts
		if task.Metadata == nil {
			task.Metadata = st.Task.Metadata
		}
	}
	if err := checkHistoryRoom(p.ID, len(task.History), h.taskHistory()); err != nil {
		return nil, err
	}
	task.History = append(task.History[:len(task.History):len(task.History)], msg)
	if task.Metadata == nil {
		task.Metadata = map[string]any{}
	}
	if run.prior == nil {
		_, err = h.tasks.Create(ctx, task)
	} else {
		_, err = h.tasks.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: st.Version})
	}
	switch {
	case errors.Is(err, taskstore.ErrTaskAlreadyExists), errors.Is(err, taskstore.ErrConcurrentModification):
		return nil, invalidParams(busyDetails(p.ID)) // another message took it meanwhile
	case err != nil:
		return nil, withDetails(a2a.ErrInternalError, fmt.Sprintf("Could not store task %s: %v", p.ID, err))
	}
	run.task = task
	return run, nil
}

// putBack undoes startSeedTask for a message whose turn did not run: a new task is deleted, one
// taken up again is stored as it was. A task something else changed since stays.
func (h *Handler) putBack(ctx context.Context, run *seedRun) {
	st, err := h.tasks.Get(ctx, run.task.ID)
	if err == nil {
		if hist := st.Task.History; len(hist) == 0 || hist[len(hist)-1] == nil || hist[len(hist)-1].ID != run.msg.ID {
			return
		}
		if run.prior == nil {
			err = h.tasks.Delete(ctx, run.task.ID)
		} else {
			_, err = h.tasks.Update(ctx, &taskstore.UpdateRequest{Task: run.prior, PrevVersion: st.Version})
		}
	}
	if err != nil {
		h.o.Logger.Warn("a2a: putting a seed task back", "task", run.task.ID, "err", err)
	}
}
