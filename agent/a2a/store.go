package a2a

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// The tables are prefixed a2a_ because the database is shared with the agent's memory.
const schema = `
CREATE TABLE IF NOT EXISTS a2a_tasks (
	id         TEXT PRIMARY KEY,
	context_id TEXT NOT NULL,
	state      TEXT NOT NULL,
	version    INTEGER NOT NULL,
	updated_ns INTEGER NOT NULL,
	task       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_tasks_context ON a2a_tasks(context_id, updated_ns);
CREATE TABLE IF NOT EXISTS a2a_seed_tasks (
	id         TEXT PRIMARY KEY,
	state      TEXT NOT NULL,
	updated_ns INTEGER NOT NULL,
	task       TEXT NOT NULL
);
`

// sqlTaskStore is a2a-go's taskstore.Store over SQLite: tasks as JSON, with a version column for
// the optimistic concurrency a2a-go asks of a store.
type sqlTaskStore struct {
	db  *sql.DB
	now func() time.Time
}

var _ taskstore.Store = (*sqlTaskStore)(nil)

func newSQLTaskStore(ctx context.Context, db *sql.DB, now func() time.Time) (*sqlTaskStore, error) {
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("a2a: creating the task tables: %w", err)
	}
	return &sqlTaskStore{db: db, now: now}, nil
}

func (s *sqlTaskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	b, err := json.Marshal(task)
	if err != nil {
		return 0, fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
	}
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO a2a_tasks(id, context_id, state, version, updated_ns, task) VALUES(?, ?, ?, 1, ?, ?)
		 ON CONFLICT(id) DO NOTHING`,
		string(task.ID), task.ContextID, string(task.Status.State), s.now().UnixNano(), string(b))
	if err != nil {
		return 0, fmt.Errorf("a2a: storing task %s: %w", task.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, fmt.Errorf("a2a: task %s: %w", task.ID, taskstore.ErrTaskAlreadyExists)
	}
	return 1, nil
}

func (s *sqlTaskStore) Update(ctx context.Context, u *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	task := u.Task
	b, err := json.Marshal(task)
	if err != nil {
		return 0, fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
	}
	// One statement: the version check and the write are atomic without a transaction.
	query := `UPDATE a2a_tasks SET context_id = ?, state = ?, version = version + 1, updated_ns = ?, task = ?
		WHERE id = ?`
	args := []any{task.ContextID, string(task.Status.State), s.now().UnixNano(), string(b), string(task.ID)}
	if u.PrevVersion != taskstore.TaskVersionMissing {
		query += ` AND version = ?`
		args = append(args, int64(u.PrevVersion))
	}
	var version int64
	err = s.db.QueryRowContext(ctx, query+` RETURNING version`, args...).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		// Either no such task or another version: tell which.
		var stored int64
		switch err := s.db.QueryRowContext(ctx, `SELECT version FROM a2a_tasks WHERE id = ?`, string(task.ID)).Scan(&stored); {
		case errors.Is(err, sql.ErrNoRows):
			return 0, fmt.Errorf("a2a: task %s: %w", task.ID, a2a.ErrTaskNotFound)
		case err != nil:
			return 0, fmt.Errorf("a2a: updating task %s: %w", task.ID, err)
		}
		return 0, fmt.Errorf("a2a: task %s is at version %d, not %d: %w", task.ID, stored, u.PrevVersion, taskstore.ErrConcurrentModification)
	}
	if err != nil {
		return 0, fmt.Errorf("a2a: updating task %s: %w", task.ID, err)
	}
	return taskstore.TaskVersion(version), nil
}

func (s *sqlTaskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	var version int64
	var raw string
	err := s.db.QueryRowContext(ctx, `SELECT version, task FROM a2a_tasks WHERE id = ?`, string(id)).Scan(&version, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("a2a: task %s: %w", id, a2a.ErrTaskNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("a2a: reading task %s: %w", id, err)
	}
	var task a2a.Task
	if err := json.Unmarshal([]byte(raw), &task); err != nil {
		return nil, fmt.Errorf("a2a: decoding task %s: %w", id, err)
	}
	return &taskstore.StoredTask{Task: &task, Version: taskstore.TaskVersion(version)}, nil
}

// List returns the newest tasks, optionally of one context and state. It pages by offset; the
// page token is the offset in decimal.
func (s *sqlTaskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	size := req.PageSize
	if size == 0 {
		size = 50
	}
	if size < 1 || size > 100 {
		return nil, fmt.Errorf("page size must be between 1 and 100, got %d: %w", size, a2a.ErrInvalidRequest)
	}
	offset := 0
	if req.PageToken != "" {
		if _, err := fmt.Sscanf(req.PageToken, "%d", &offset); err != nil || offset < 0 {
			return nil, fmt.Errorf("bad page token %q: %w", req.PageToken, a2a.ErrInvalidRequest)
		}
	}
	where, args := "1=1", []any{}
	if req.ContextID != "" {
		where += " AND context_id = ?"
		args = append(args, req.ContextID)
	}
	if req.Status != a2a.TaskStateUnspecified {
		where += " AND state = ?"
		args = append(args, string(req.Status))
	}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM a2a_tasks WHERE `+where, args...).Scan(&total); err != nil {
		return nil, fmt.Errorf("a2a: listing tasks: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT task FROM a2a_tasks WHERE `+where+
		` ORDER BY updated_ns DESC, id DESC LIMIT ? OFFSET ?`, append(args, size, offset)...)
	if err != nil {
		return nil, fmt.Errorf("a2a: listing tasks: %w", err)
	}
	defer rows.Close()
	resp := &a2a.ListTasksResponse{TotalSize: total, PageSize: size}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("a2a: listing tasks: %w", err)
		}
		var t a2a.Task
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			return nil, fmt.Errorf("a2a: decoding a listed task: %w", err)
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		if req.HistoryLength != nil && *req.HistoryLength >= 0 && len(t.History) > *req.HistoryLength {
			t.History = t.History[len(t.History)-*req.HistoryLength:]
		}
		resp.Tasks = append(resp.Tasks, &t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("a2a: listing tasks: %w", err)
	}
	if offset+len(resp.Tasks) < total {
		resp.NextPageToken = fmt.Sprint(offset + len(resp.Tasks))
	}
	return resp, nil
}

// failUnfinished marks the tasks a previous run left submitted or working as failed.
func (s *sqlTaskStore) failUnfinished(ctx context.Context, why string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM a2a_tasks WHERE state IN (?, ?)`,
		string(a2a.TaskStateSubmitted), string(a2a.TaskStateWorking))
	if err != nil {
		return fmt.Errorf("a2a: finding unfinished tasks: %w", err)
	}
	var ids []a2a.TaskID
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("a2a: finding unfinished tasks: %w", err)
		}
		ids = append(ids, a2a.TaskID(id))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("a2a: finding unfinished tasks: %w", err)
	}
	for _, id := range ids {
		st, err := s.Get(ctx, id)
		if err != nil {
			return err
		}
		now := s.now()
		st.Task.Status = a2a.TaskStatus{
			State:     a2a.TaskStateFailed,
			Message:   a2a.NewMessageForTask(a2a.MessageRoleAgent, st.Task, a2a.NewTextPart(why)),
			Timestamp: &now,
		}
		if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: st.Task, PrevVersion: st.Version}); err != nil {
			return err
		}
	}
	return nil
}

// errSeedNotFound is a seed-route task id that is not stored.
var errSeedNotFound = errors.New("a2a: no such task")

// seedTasks keeps seed 004's tasks, in the seed's own JSON shape.
type seedTasks struct{ db *sql.DB }

func newSeedTasks(ctx context.Context, db *sql.DB) (*seedTasks, error) {
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("a2a: creating the task tables: %w", err)
	}
	return &seedTasks{db: db}, nil
}

func (s *seedTasks) get(ctx context.Context, id string) (*seedTask, error) {
	var raw string
	err := s.db.QueryRowContext(ctx, `SELECT task FROM a2a_seed_tasks WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("task %s: %w", id, errSeedNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("a2a: reading task %s: %w", id, err)
	}
	var t seedTask
	if err := json.Unmarshal([]byte(raw), &t); err != nil {
		return nil, fmt.Errorf("a2a: decoding task %s: %w", id, err)
	}
	return &t, nil
}

func (s *seedTasks) put(ctx context.Context, t *seedTask) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("a2a: encoding task %s: %w", t.ID, err)
	}
	_, err = s.db.ExecContext(ctx,
		`INSERT INTO a2a_seed_tasks(id, state, updated_ns, task) VALUES(?, ?, ?, ?)
		 ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated_ns = excluded.updated_ns, task = excluded.task`,
		t.ID, t.Status.State, time.Now().UnixNano(), string(b))
	if err != nil {
		return fmt.Errorf("a2a: storing task %s: %w", t.ID, err)
	}
	return nil
}

// failUnfinished marks the tasks a previous run left submitted or working as failed.
func (s *seedTasks) failUnfinished(ctx context.Context, why string, now func() string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM a2a_seed_tasks WHERE state IN (?, ?)`, stateSubmitted, stateWorking)
	if err != nil {
		return fmt.Errorf("a2a: finding unfinished tasks: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("a2a: finding unfinished tasks: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("a2a: finding unfinished tasks: %w", err)
	}
	for _, id := range ids {
		t, err := s.get(ctx, id)
		if err != nil {
			return err
		}
		t.Status = seedStatus{State: stateFailed, Message: textMessage("agent", why), Timestamp: now()}
		if err := s.put(ctx, t); err != nil {
			return err
		}
	}
	return nil
}
