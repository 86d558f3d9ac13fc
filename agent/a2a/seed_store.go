package a2a

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// The seed routes keep their tasks in the A2A task table, as a2a.Task: one table, one pruning,
// one restart check, and a task of either door can be read through the other. The seed's JSON
// is a view of an a2a.Task (seedView) and is turned back into one (a2aTask) to be stored.

// seedStates maps the seed's task states to A2A's.
var seedStates = map[string]a2a.TaskState{
	stateSubmitted:     a2a.TaskStateSubmitted,
	stateWorking:       a2a.TaskStateWorking,
	stateInputRequired: a2a.TaskStateInputRequired,
	stateCompleted:     a2a.TaskStateCompleted,
	stateCanceled:      a2a.TaskStateCanceled,
	stateFailed:        a2a.TaskStateFailed,
}

// seedState is the seed's name of an A2A state; those the seed lacks read as the nearest.
func seedState(s a2a.TaskState) string {
	for name, st := range seedStates {
		if st == s {
			return name
		}
	}
	switch s {
	case a2a.TaskStateAuthRequired:
		return stateInputRequired
	case a2a.TaskStateRejected:
		return stateFailed
	}
	return stateSubmitted
}

func seedRole(r a2a.MessageRole) string {
	if r == a2a.MessageRoleUser {
		return "user"
	}
	return "agent"
}

func seedParts(parts []*a2a.Part) []seedPart {
	out := make([]seedPart, 0, len(parts))
	for _, p := range parts {
		if p != nil {
			out = append(out, seedPart{Type: "text", Text: p.Text()})
		}
	}
	return out
}

func seedMessageOf(m *a2a.Message) *seedMessage {
	if m == nil {
		return nil
	}
	return &seedMessage{Role: seedRole(m.Role), Parts: seedParts(m.Parts)}
}

// seedView is the seed's shape of a stored task.
func seedView(t *a2a.Task) *seedTask {
	st := &seedTask{ID: string(t.ID), SessionID: t.ContextID, Artifacts: []seedArtifact{}, History: []seedMessage{},
		Metadata: t.Metadata}
	if st.Metadata == nil {
		st.Metadata = map[string]any{}
	}
	st.Status = seedStatus{State: seedState(t.Status.State), Message: seedMessageOf(t.Status.Message)}
	if t.Status.Timestamp != nil {
		st.Status.Timestamp = stamp(*t.Status.Timestamp)
	}
	for _, a := range t.Artifacts {
		if a != nil {
			st.Artifacts = append(st.Artifacts, seedArtifact{Parts: seedParts(a.Parts)})
		}
	}
	for _, m := range t.History {
		if m != nil {
			st.History = append(st.History, *seedMessageOf(m))
		}
	}
	return st
}

// a2aMessage is a seed message of task t; A2A messages need an id, which the seed's lack.
func a2aMessage(t *seedTask, m *seedMessage) *a2a.Message {
	if m == nil {
		return nil
	}
	role := a2a.MessageRoleAgent
	if m.Role == "user" {
		role = a2a.MessageRoleUser
	}
	parts := make([]*a2a.Part, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = a2a.NewTextPart(p.Text)
	}
	return &a2a.Message{ID: a2a.NewMessageID(), Role: role, Parts: parts, TaskID: a2a.TaskID(t.ID), ContextID: t.SessionID}
}

// a2aTask is the seed task t as stored.
func a2aTask(t *seedTask) (*a2a.Task, error) {
	state, ok := seedStates[t.Status.State]
	if !ok {
		return nil, fmt.Errorf("a2a: task %s has state %q, not a seed state", t.ID, t.Status.State)
	}
	task := &a2a.Task{ID: a2a.TaskID(t.ID), ContextID: t.SessionID, Metadata: t.Metadata,
		Status: a2a.TaskStatus{State: state, Message: a2aMessage(t, t.Status.Message)}}
	if t.Status.Timestamp != "" {
		at, err := time.Parse(time.RFC3339, t.Status.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("a2a: task %s: status timestamp: %w", t.ID, err)
		}
		task.Status.Timestamp = &at
	}
	for _, a := range t.Artifacts {
		parts := make([]*a2a.Part, len(a.Parts))
		for i, p := range a.Parts {
			parts[i] = a2a.NewTextPart(p.Text)
		}
		task.Artifacts = append(task.Artifacts, &a2a.Artifact{ID: a2a.NewArtifactID(), Name: replyArtifactName, Parts: parts})
	}
	for i := range t.History {
		task.History = append(task.History, a2aMessage(t, &t.History[i]))
	}
	return task, nil
}

// loadSeedTask reads a task in the seed's shape, with its version for the write that follows;
// a2a.ErrTaskNotFound when none is stored.
func (h *Handler) loadSeedTask(ctx context.Context, id string) (*seedTask, taskstore.TaskVersion, error) {
	st, err := h.a2a.Get(ctx, a2a.TaskID(id))
	if err != nil {
		return nil, 0, err
	}
	return seedView(st.Task), st.Version, nil
}

// storeSeedTask writes t as changed at at: created when prev is TaskVersionMissing, else
// updated from version prev. Creating a task prunes the finished ones past
// agent.tasks.keep.age and agent.tasks.keep.count, as for every task.
func (h *Handler) storeSeedTask(ctx context.Context, t *seedTask, at time.Time, prev taskstore.TaskVersion) (taskstore.TaskVersion, error) {
	task, err := a2aTask(t)
	if err != nil {
		return 0, err
	}
	if prev == taskstore.TaskVersionMissing {
		return h.a2a.createAt(ctx, task, at)
	}
	return h.a2a.updateAt(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: prev}, func() time.Time { return at })
}

// stamp is a seed timestamp.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// migrations are the task tables' versioned steps on SQLite (store.DB.Migrate, component "a2a"):
// 1. the seed routes' own table, a2a_seed_tasks, is copied into a2a_tasks as A2A tasks (a task
// whose id an A2A task already has is dropped), then dropped. A subquery's JSON loses its type
// in SQLite: each is wrapped in json() to nest as JSON rather than as a string.
var migrations = []string{
	`CREATE TABLE IF NOT EXISTS a2a_seed_tasks (
		id TEXT PRIMARY KEY, state TEXT NOT NULL, updated_ns INTEGER NOT NULL, task TEXT NOT NULL);
	INSERT INTO a2a_tasks(id, context_id, state, version, updated_ns, task, status_ns)
	SELECT tid, sid, st, 1, updated_ns, json_object(
			'id', tid,
			'contextId', sid,
			'status', json_object('state', st, 'timestamp', task ->> '$.status.timestamp',
				'message', CASE WHEN json_type(task, '$.status.message') = 'object'
					THEN json(` + seedMessageSQL("task -> '$.status.message'", "tid || '-s'") + `) END),
			'artifacts', json((SELECT json_group_array(json_object('artifactId', tid || '-a' || a.key, 'name', '` + replyArtifactName + `',
					'parts', json((SELECT json_group_array(json_object('text', p.value ->> '$.text')) FROM json_each(a.value, '$.parts') p))))
				FROM json_each(task, '$.artifacts') a)),
			'history', json((SELECT json_group_array(json(` + seedMessageSQL("m.value", "tid || '-h' || m.key") + `))
				FROM json_each(task, '$.history') m)),
			'metadata', json(coalesce(task -> '$.metadata', '{}'))),
		updated_ns
	FROM (SELECT id AS tid, updated_ns, task, task ->> '$.sessionId' AS sid,
			CASE state ` + seedStateCasesSQL() + ` ELSE 'TASK_STATE_FAILED' END AS st
		FROM a2a_seed_tasks) WHERE true
	ON CONFLICT(id) DO NOTHING;
	DROP TABLE a2a_seed_tasks;`,
}

// seedMessageSQL is the SQL of an A2A message made of the seed message m, with the message id
// msgID (both SQL expressions; tid and sid are the task's, named so that json_each's id column
// does not hide them).
func seedMessageSQL(m, msgID string) string {
	return `json_object('messageId', ` + msgID + `, 'contextId', sid, 'taskId', tid,
		'role', CASE ` + m + ` ->> '$.role' WHEN 'user' THEN '` + string(a2a.MessageRoleUser) + `' ELSE '` + string(a2a.MessageRoleAgent) + `' END,
		'parts', json((SELECT json_group_array(json_object('text', p.value ->> '$.text')) FROM json_each(` + m + `, '$.parts') p)))`
}

// seedStateCasesSQL is the WHEN clauses of a CASE mapping seed states to A2A's.
func seedStateCasesSQL() string {
	var b strings.Builder
	for _, name := range []string{stateSubmitted, stateWorking, stateInputRequired, stateCompleted, stateCanceled, stateFailed} {
		fmt.Fprintf(&b, "WHEN '%s' THEN '%s' ", name, seedStates[name])
	}
	return b.String()
}
