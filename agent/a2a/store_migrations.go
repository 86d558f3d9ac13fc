package a2a

import (
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// migrations are the task tables' versioned steps on SQLite (store.DB.Migrate, component "a2a"):
// 1. the seed routes' own table, a2a_seed_tasks, is copied into a2a_tasks as A2A tasks (a task
// whose id an A2A task already has is dropped), then dropped. A subquery's JSON loses its type
// in SQLite: each is wrapped in json() to nest as JSON rather than as a string.
// 2. node, the serve node that runs the task (see sqlTaskStore), empty for the older tasks.
// 3. the context's index without updated_ns (contextIndex).
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
	addNodeColumn,
	contextIndex,
}

// addNodeColumn is the step of both databases that records which node runs a task.
const addNodeColumn = `ALTER TABLE a2a_tasks ADD COLUMN node TEXT NOT NULL DEFAULT ''`

// contextIndex is the step of both databases that indexes a task's context alone, where the
// index held the context and updated_ns: each write of a task changes updated_ns, and moved the
// task's entry in that index, a page written for nothing but that. Listing a context's tasks
// newest first sorts them (a context holds few; agent.tasks.keep bounds them all).
const contextIndex = `DROP INDEX IF EXISTS a2a_tasks_context;
CREATE INDEX a2a_tasks_context_id ON a2a_tasks (context_id)`

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
