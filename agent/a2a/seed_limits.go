package a2a

import "time"

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

// checkMessageSize refuses a message whose text, every part together, is larger than
// agent.limits.message_bytes: the text goes to the planner and into the task's history.
func (h *Handler) checkMessageSize(m *seedMessage) *rpcError {
	n := 0
	for _, p := range m.Parts {
		n += len(p.Text)
	}
	if limit := h.messageBytes(); int64(n) > limit {
		return newRPCError(codeInvalidRequest, "The message's text is %d bytes; agent.limits.message_bytes is %d", n, limit)
	}
	return nil
}

// checkHistoryRoom refuses a send to a task that has no room left for the message and its
// reply under agent.limits.task_history: a task is rewritten whole on every send, so an
// unbounded one makes each send slower than the last.
func (h *Handler) checkHistoryRoom(id string, held int) *rpcError {
	const perSend = 2 // the message and the reply
	if limit := h.taskHistory(); held+perSend > limit {
		return newRPCError(codeInvalidRequest,
			"Task %s holds %d messages; agent.limits.task_history is %d and this send would add %d (the message and its reply): start a new task",
			id, held, limit, perSend)
	}
	return nil
}
