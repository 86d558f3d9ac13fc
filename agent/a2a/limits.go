package a2a

import (
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The defaults of the zero limit options, as configs/devicectl.yaml has them.
const (
	defaultMessageBytes   = 64 << 10
	defaultTaskHistory    = 200
	defaultTasksKeepAge   = 30 * 24 * time.Hour
	defaultTasksKeepCount = 10000
)

func (h *Handler) messageBytes() int64 {
	if h.o.MessageBytes > 0 {
		return h.o.MessageBytes
	}
	return defaultMessageBytes
}

func (h *Handler) taskHistory() int {
	if h.o.TaskHistory > 0 {
		return h.o.TaskHistory
	}
	return defaultTaskHistory
}

// tasksKeep fills the zero keep limits with their defaults.
func tasksKeep(age time.Duration, count int) (time.Duration, int) {
	if age <= 0 {
		age = defaultTasksKeepAge
	}
	if count <= 0 {
		count = defaultTasksKeepCount
	}
	return age, count
}

// checkMessageSize refuses a message whose text, every part together, is larger than limit
// (agent.limits.message_bytes): the text goes to the planner and into the task's history. Every
// message is checked once, before anything is stored for it: on the A2A paths by detailer, on
// the seed routes before their task is.
func checkMessageSize(m *a2a.Message, limit int64) error {
	n := 0
	for _, p := range m.Parts {
		if p != nil {
			n += len(p.Text())
		}
	}
	if int64(n) > limit {
		return withDetails(a2a.ErrInvalidRequest, fmt.Sprintf("The message's text is %d bytes; agent.limits.message_bytes is %d", n, limit))
	}
	return nil
}

// checkHistoryRoom refuses a message to a task that has no room left for it and its reply under
// agent.limits.task_history (held: the messages the task holds): a task is rewritten whole on
// every state change, so an unbounded one makes each turn slower than the last. Only the seed
// routes add a turn to a task that has one (A2A refuses a message to a finished task), so they
// alone check it.
func checkHistoryRoom(id a2a.TaskID, held, limit int) error {
	const perSend = 2 // the message and the reply
	if held+perSend > limit {
		return withDetails(a2a.ErrInvalidRequest, fmt.Sprintf(
			"Task %s holds %d messages; agent.limits.task_history is %d and this send would add %d (the message and its reply): start a new task",
			id, held, limit, perSend))
	}
	return nil
}
