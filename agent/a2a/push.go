package a2a

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Notify sends text to the push notification receivers registered for the task (A2A
// CreateTaskPushNotificationConfig, 0.3 tasks/pushNotificationConfig/set): a status update of
// the task, in its current state, whose message is text from the agent. The server calls it when
// something set during the task happens later, such as a reminder coming due. A task with no
// receiver is nothing to do; a receiver that fails or answers other than 2xx is an error, the
// others are still sent to.
//
// The configs are kept in memory: they are lost when the server restarts, and a client
// registers them again.
func (h *Handler) Notify(ctx context.Context, taskID, text string) error {
	id := a2a.TaskID(taskID)
	configs, err := h.pushes.List(ctx, id)
	if err != nil {
		return fmt.Errorf("a2a: push configs of task %s: %w", taskID, err)
	}
	if len(configs) == 0 {
		return nil
	}
	st, err := h.tasks.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("a2a: notifying task %s: %w", taskID, err)
	}
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, st.Task, a2a.NewTextPart(text))
	event := a2a.NewStatusUpdateEvent(st.Task, st.Task.Status.State, msg)
	var errs []error
	for _, c := range configs {
		if err := h.notifier.SendPush(ctx, c, event); err != nil {
			errs = append(errs, fmt.Errorf("a2a: push to %s for task %s: %w", c.URL, taskID, err))
		}
	}
	return errors.Join(errs...)
}
