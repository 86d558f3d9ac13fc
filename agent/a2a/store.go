package a2a

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/devicectl/devicectl/agent/store"
)

// The tables are prefixed a2a_ because the database is shared with the agent's memory. This is
// SQLite's table; PostgreSQL's is made by its migrations (store_postgres.go).
const schema = `
CREATE TABLE IF NOT EXISTS a2a_tasks (
	id         TEXT PRIMARY KEY,
	context_id TEXT NOT NULL,
	state      TEXT NOT NULL,
	version    INTEGER NOT NULL,
	updated_ns INTEGER NOT NULL,
	task       TEXT NOT NULL,
	status_ns  INTEGER NOT NULL DEFAULT 0
);
`

// taskStore is what the handler needs of a task store: a2a-go's taskstore.Store, which a2a-go's
// request handler drives, and what the seed routes and the restart need besides. A status
// stored without a timestamp is stamped with the time it is stored at.
type taskStore interface {
	taskstore.Store
	// Delete removes a task, as if it had never been created.
	Delete(ctx context.Context, id a2a.TaskID) error
	// unfinishedNodes lists the nodes that have tasks submitted or working in the database.
	unfinishedNodes(ctx context.Context) ([]string, error)
	// failNode marks node's tasks left submitted or working as failed with the message why, and
	// returns how many it marked.
	failNode(ctx context.Context, node, why string) (int, error)
	// close releases what the store holds; the database stays open.
	close() error
}

// sqlTaskStore is a2a-go's taskstore.Store over the agent's database (agent/store: SQLite, or
// PostgreSQL with the tables of store_postgres.go): tasks as JSON, with a version column for
// the optimistic concurrency a2a-go asks of a store. status_ns is the status's timestamp, for
// ListTasks' statusTimestampAfter.
//
// A task is written when its state changes (created, working, completed, ...), not on every
// event: a2a-go updates the store for each piece of a streamed reply, and a task rewritten whole
// per piece costs O(n²) bytes for a reply of n pieces. Between state changes the task lives in
// memory (live), where Get and List read it; a crash meanwhile loses only the pieces since the
// last state change, and the next start marks the task failed anyway. Writes go through the
// database's writer (one connection on SQLite) with statements prepared once, the writes of
// concurrent tasks committed together (writer). One task's check of its version and the write
// that follows are one at a time (liveTask.turn); other tasks' writes go on meanwhile.
//
// Each row names the node that runs the task (node: the name of this store's serve node in a
// cluster, else one of this process's), set as the task is created or taken up again. A node
// that is gone leaves its unfinished tasks behind, submitted or working: another node marks them
// failed (failNode) once it knows, and a node restarted under the same name marks its own at
// start. A task's writes by the node that runs it then find the row no longer theirs (it is
// finished, or another node's): ErrConcurrentModification, on which a2a-go reads the task again
// and ends the turn with what it says, so that a finished task stays as it ended.
//
// It keeps finished tasks (completed, failed, canceled, rejected) for keepAge and at most
// keepCount tasks in all, deleting the oldest finished ones past it; a task still running is
// never deleted. Pruning runs as tasks are created: the count check costs nothing (the row count
// is kept in memory), the age check runs at most once per agePruneEvery; both delete through
// the index on updated_ns. Past keepCount, the oldest are deleted down to a percent under it
// (pruneBatch), so that a store at the count deletes in batches, not a task per new one.
type sqlTaskStore struct {
	node      string    // the node that runs the tasks this store creates or takes up
	db        *sql.DB   // reads
	get       *sql.Stmt // Get's, prepared once: a task is read a few times per turn
	w         *writer
	now       func() time.Time
	keepAge   time.Duration // 0: no limit
	keepCount int           // 0: no limit
	log       *slog.Logger

	pruneMu   sync.Mutex // guards rows and agePruned; held by the one pruning at a time
	rows      int        // rows in a2a_tasks
	agePruned time.Time  // when the age check last ran

	liveMu sync.Mutex // guards live
	live   map[a2a.TaskID]*liveTask
}

// liveTask is a running task whose newest version is in memory only.
type liveTask struct {
	task    *a2a.Task // the newest; not changed once stored here (a2a-go copies before it changes one)
	version int64
	stored  a2a.TaskState // the state last written
	// turn is held across a check of the task's version and the write that follows it, so
	// that its writes are one at a time and in order; the same for each version of one task.
	turn *sync.Mutex
}

// agePruneEvery spaces the deletions of tasks past keepAge: a task may outlive it by as much.
const agePruneEvery = time.Minute

// pruneBatch is how many tasks below keepCount a pruning past it leaves room for: a percent of
// it, so that a store at the count deletes a batch every so many new tasks rather than a task
// with each (1 for a count under 200: exactly the count is kept).
func pruneBatch(keepCount int) int { return max(1, keepCount/100) }

var _ taskStore = (*sqlTaskStore)(nil)

// finishedStates are the states a task no longer leaves, the only ones pruning deletes.
var finishedStates = []any{string(a2a.TaskStateCompleted), string(a2a.TaskStateFailed),
	string(a2a.TaskStateCanceled), string(a2a.TaskStateRejected)}

const finishedIn = "state IN (?, ?, ?, ?)"

// pruneCountQuery deletes the oldest finished tasks, as many as its last argument says. Ordered
// by updated_ns alone, they are read off the index on (updated_ns, state) and the scan stops at
// the limit; a tie-break on id would read and sort the whole table for each pruning.
const pruneCountQuery = `DELETE FROM a2a_tasks WHERE id IN
	(SELECT id FROM a2a_tasks WHERE ` + finishedIn + ` ORDER BY updated_ns LIMIT ?)`

func newSQLTaskStore(ctx context.Context, db *store.DB, node string, now func() time.Time, keepAge time.Duration, keepCount int, log *slog.Logger) (*sqlTaskStore, error) {
	if db.Dialect() == store.SQLite {
		if err := sqliteTables(ctx, db); err != nil {
			return nil, err
		}
	}
	if err := db.Migrate(ctx, "a2a", store.Schema{SQLite: store.SQL(migrations...), Postgres: pgMigrations}); err != nil {
		return nil, fmt.Errorf("a2a: migrating the task tables: %w", err)
	}
	get, err := db.PrepareContext(ctx, `SELECT version, task FROM a2a_tasks WHERE id = ?`)
	if err != nil {
		return nil, fmt.Errorf("a2a: preparing the task read: %w", err)
	}
	w, err := newWriter(ctx, db)
	if err != nil {
		get.Close()
		return nil, err
	}
	s := &sqlTaskStore{node: node, db: db.DB, get: get, w: w, now: now, keepAge: keepAge, keepCount: keepCount, log: log,
		live: make(map[a2a.TaskID]*liveTask)}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM a2a_tasks`).Scan(&s.rows); err != nil {
		s.close()
		return nil, fmt.Errorf("a2a: counting the tasks: %w", err)
	}
	s.pruneMu.Lock()
	err = s.pruneLocked(ctx, now())
	s.pruneMu.Unlock()
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close ends the writes; reads go on, as the DB stays open: a2a-go reads an execution's result
// after its last write, which may come as Close ends the turns. Get's statement goes when the DB
// is closed.
func (s *sqlTaskStore) close() error {
	return s.w.close()
}

// sqliteTables makes the task table and brings one made before its migrations up to them.
func sqliteTables(ctx context.Context, db *store.DB) error {
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("a2a: creating the task tables: %w", err)
	}
	if err := addStatusNs(ctx, db.DB); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS a2a_tasks_updated ON a2a_tasks(updated_ns, state)`); err != nil {
		return fmt.Errorf("a2a: creating the task index: %w", err)
	}
	return nil
}

// addStatusNs adds status_ns to a table made before it existed, filled from the stored tasks.
func addStatusNs(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('a2a_tasks') WHERE name = 'status_ns'`).Scan(&n); err != nil {
		return fmt.Errorf("a2a: reading the task table's columns: %w", err)
	}
	if n > 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("a2a: adding status_ns: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if _, err := tx.ExecContext(ctx, `ALTER TABLE a2a_tasks ADD COLUMN status_ns INTEGER NOT NULL DEFAULT 0`); err != nil {
		return fmt.Errorf("a2a: adding status_ns: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, updated_ns, task FROM a2a_tasks`)
	if err != nil {
		return fmt.Errorf("a2a: adding status_ns: %w", err)
	}
	type fill struct {
		id string
		ns int64
	}
	var fills []fill
	for rows.Next() {
		var f fill
		var raw string
		if err := rows.Scan(&f.id, &f.ns, &raw); err != nil {
			rows.Close()
			return fmt.Errorf("a2a: adding status_ns: %w", err)
		}
		var t a2a.Task
		if json.Unmarshal([]byte(raw), &t) == nil && t.Status.Timestamp != nil {
			f.ns = t.Status.Timestamp.UnixNano()
		}
		fills = append(fills, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("a2a: adding status_ns: %w", err)
	}
	for _, f := range fills {
		if _, err := tx.ExecContext(ctx, `UPDATE a2a_tasks SET status_ns = ? WHERE id = ?`, f.ns, f.id); err != nil {
			return fmt.Errorf("a2a: adding status_ns: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("a2a: adding status_ns: %w", err)
	}
	return nil
}

// statusNs is when the task's status was set; a status without a timestamp (a2a-go's
// submitted) counts from now.
func statusNs(t *a2a.Task, now time.Time) int64 {
	if t.Status.Timestamp != nil {
		return t.Status.Timestamp.UnixNano()
	}
	return now.UnixNano()
}

func (s *sqlTaskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	return s.createAt(ctx, task, s.now())
}

// createAt is Create as of now, the clock read once by the caller.
func (s *sqlTaskStore) createAt(ctx context.Context, task *a2a.Task, now time.Time) (taskstore.TaskVersion, error) {
	stampStatus(task, now)
	b, err := json.Marshal(task)
	if err != nil {
		return 0, fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
	}
	res, err := s.w.exec(ctx,
		`INSERT INTO a2a_tasks(id, context_id, state, version, updated_ns, task, status_ns, node) VALUES(?, ?, ?, 1, ?, ?, ?, ?)
		 ON CONFLICT(id) DO NOTHING`,
		string(task.ID), task.ContextID, string(task.Status.State), now.UnixNano(), string(b), statusNs(task, now), s.node)
	if err != nil {
		return 0, fmt.Errorf("a2a: storing task %s: %w", task.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, fmt.Errorf("a2a: task %s: %w", task.ID, taskstore.ErrTaskAlreadyExists)
	}
	if !task.Status.State.Terminal() {
		s.setLive(task.ID, &liveTask{task: task, version: 1, stored: task.Status.State, turn: new(sync.Mutex)})
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	s.rows++
	// A task that could not be pruned stays; the next creation tries again.
	if err := s.pruneLocked(ctx, now); err != nil {
		s.log.Warn("a2a: pruning the tasks", "err", err)
	}
	return 1, nil
}

// stampStatus gives the task's status the time now when it has none: the time it is stored at.
func stampStatus(task *a2a.Task, now time.Time) {
	if task.Status.Timestamp == nil {
		task.Status.Timestamp = &now
	}
}

// Delete removes the task.
func (s *sqlTaskStore) Delete(ctx context.Context, id a2a.TaskID) error {
	if lt := s.lockLive(id); lt != nil {
		defer lt.turn.Unlock()
	}
	res, err := s.w.exec(ctx, `DELETE FROM a2a_tasks WHERE id = ?`, string(id))
	if err != nil {
		return fmt.Errorf("a2a: deleting task %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	s.pruneMu.Lock()
	s.rows -= int(n)
	s.pruneMu.Unlock()
	s.setLive(id, nil)
	return nil
}

// lockLive takes the turn of task id when it is live, and returns its newest version then, as
// it is with the turn held; nil when the task is not live. The caller unlocks lt.turn.
func (s *sqlTaskStore) lockLive(id a2a.TaskID) *liveTask {
	for {
		s.liveMu.Lock()
		lt := s.live[id]
		s.liveMu.Unlock()
		if lt == nil {
			return nil
		}
		lt.turn.Lock()
		s.liveMu.Lock()
		cur := s.live[id]
		s.liveMu.Unlock()
		if cur != nil && cur.turn == lt.turn {
			return cur
		}
		// It left memory while this waited (stored finished, deleted, or live anew): again.
		lt.turn.Unlock()
	}
}

// setLive keeps lt as the newest version of task id; nil forgets it (its newest is stored).
func (s *sqlTaskStore) setLive(id a2a.TaskID, lt *liveTask) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if lt == nil {
		delete(s.live, id)
	} else {
		s.live[id] = lt
	}
}

// liveCopy is a copy of the task's newest version when it is live; callers may change it.
func (s *sqlTaskStore) liveCopy(id a2a.TaskID) (*a2a.Task, int64, bool) {
	s.liveMu.Lock()
	lt := s.live[id]
	s.liveMu.Unlock()
	if lt == nil {
		return nil, 0, false
	}
	return cloneTask(lt.task), lt.version, true
}

// pruneLocked deletes the finished tasks past keepAge (at most once per agePruneEvery) and the
// oldest finished ones past keepCount. The caller holds pruneMu.
func (s *sqlTaskStore) pruneLocked(ctx context.Context, now time.Time) error {
	if s.keepAge > 0 {
		if now.Sub(s.agePruned) >= agePruneEvery {
			res, err := s.w.exec(ctx, `DELETE FROM a2a_tasks WHERE updated_ns < ? AND `+finishedIn,
				slices.Concat([]any{now.Add(-s.keepAge).UnixNano()}, finishedStates)...)
			if err != nil {
				return fmt.Errorf("a2a: deleting the tasks older than agent.tasks.keep.age %v: %w", s.keepAge, err)
			}
			n, _ := res.RowsAffected()
			s.rows -= int(n)
			s.agePruned = now
		}
	}
	if s.keepCount > 0 && s.rows > s.keepCount {
		res, err := s.w.exec(ctx, pruneCountQuery, slices.Concat(finishedStates, []any{s.rows - s.keepCount + pruneBatch(s.keepCount) - 1})...)
		if err != nil {
			return fmt.Errorf("a2a: deleting the tasks past agent.tasks.keep.count %d: %w", s.keepCount, err)
		}
		n, _ := res.RowsAffected()
		s.rows -= int(n)
	}
	return nil
}

// Update keeps the task in memory while its state stays the same (a reply's pieces), and writes
// it when the state changes; a finished task leaves memory once written.
func (s *sqlTaskStore) Update(ctx context.Context, u *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	return s.updateAt(ctx, u, s.now)
}

// updateAt is Update with the clock it reads, if it writes.
func (s *sqlTaskStore) updateAt(ctx context.Context, u *taskstore.UpdateRequest, clock func() time.Time) (taskstore.TaskVersion, error) {
	task := u.Task
	if lt := s.lockLive(task.ID); lt != nil {
		defer lt.turn.Unlock()
		if u.PrevVersion != taskstore.TaskVersionMissing && int64(u.PrevVersion) != lt.version {
			return 0, fmt.Errorf("a2a: task %s is at version %d, not %d: %w", task.ID, lt.version, u.PrevVersion, taskstore.ErrConcurrentModification)
		}
		next := &liveTask{task: task, version: lt.version + 1, stored: lt.stored, turn: lt.turn}
		if task.Status.State == lt.stored && !task.Status.State.Terminal() {
			s.setLive(task.ID, next)
			return taskstore.TaskVersion(next.version), nil
		}
		now := clock()
		stampStatus(task, now)
		if err := s.writeLocked(ctx, task, lt.stored, next.version, now); err != nil {
			return 0, err
		}
		if task.Status.State.Terminal() {
			s.setLive(task.ID, nil)
		} else {
			next.stored = task.Status.State
			s.setLive(task.ID, next)
		}
		return taskstore.TaskVersion(next.version), nil
	}

	now := clock()
	stampStatus(task, now)
	b, err := json.Marshal(task)
	if err != nil {
		return 0, fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
	}
	// One statement: the version check and the write are atomic without a transaction.
	// This node runs the task from now on (a seed task taken up again, here or elsewhere).
	query := `UPDATE a2a_tasks SET context_id = ?, state = ?, version = version + 1, updated_ns = ?, task = ?, status_ns = ?, node = ?
		WHERE id = ?`
	args := []any{task.ContextID, string(task.Status.State), now.UnixNano(), string(b), statusNs(task, now), s.node, string(task.ID)}
	if u.PrevVersion != taskstore.TaskVersionMissing {
		query += ` AND version = ?`
		args = append(args, int64(u.PrevVersion))
	}
	var version int64
	row, err := s.w.queryRow(ctx, query+` RETURNING version`, args...)
	if err == nil {
		err = row.Scan(&version)
	}
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
	if !task.Status.State.Terminal() {
		// Taken up again (a seed task that gets another message): its pieces stay in memory.
		// Of two such writes at once, the later version stays.
		s.liveMu.Lock()
		if cur := s.live[task.ID]; cur == nil || cur.version < version {
			s.live[task.ID] = &liveTask{task: task, version: version, stored: task.Status.State, turn: new(sync.Mutex)}
		}
		s.liveMu.Unlock()
	}
	return taskstore.TaskVersion(version), nil
}

// writeLocked stores a live task at version, its turn held: the versions were checked in
// memory, and the row is still as this node last wrote it, in state stored, unless another node
// ended the task (failNode: it took this node for gone). The task then leaves memory, so that
// a2a-go, told of a concurrent modification, reads it as the other node left it. The context is
// not written: a task's does not change while it runs (a2a-go refuses an event of another), and
// a write that leaves it alone leaves its index alone too, a page less to write.
func (s *sqlTaskStore) writeLocked(ctx context.Context, task *a2a.Task, stored a2a.TaskState, version int64, now time.Time) error {
	b, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
	}
	res, err := s.w.exec(ctx,
		`UPDATE a2a_tasks SET state = ?, version = ?, updated_ns = ?, task = ?, status_ns = ? WHERE id = ? AND node = ? AND state = ?`,
		string(task.Status.State), version, now.UnixNano(), string(b), statusNs(task, now), string(task.ID), s.node, string(stored))
	if err != nil {
		return fmt.Errorf("a2a: updating task %s: %w", task.ID, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	var state, node string
	err = s.db.QueryRowContext(ctx, `SELECT state, node FROM a2a_tasks WHERE id = ?`, string(task.ID)).Scan(&state, &node)
	s.setLive(task.ID, nil)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("a2a: task %s: %w", task.ID, a2a.ErrTaskNotFound)
	case err != nil:
		return fmt.Errorf("a2a: updating task %s: %w", task.ID, err)
	}
	s.log.Warn("a2a: another node ended or took over a task this node runs", "task", task.ID, "state", state, "node", node)
	return fmt.Errorf("a2a: task %s is %s (node %q), no longer %s on node %s: %w", task.ID, state, node, stored, s.node, taskstore.ErrConcurrentModification)
}

func (s *sqlTaskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	if t, version, ok := s.liveCopy(id); ok {
		return &taskstore.StoredTask{Task: t, Version: taskstore.TaskVersion(version)}, nil
	}
	var version int64
	var raw string
	err := s.get.QueryRowContext(ctx, string(id)).Scan(&version, &raw)
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

// ListTasks' page sizes (a2a.proto's ListTasksRequest.page_size).
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// listableStates are the states ListTasks filters by.
var listableStates = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
	a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}

// noStatusFilter are the status values that filter nothing: unset, proto's zero value, and what
// protobuf-generated clients (@a2a-js/sdk 1.x) send for a status they were not given.
var noStatusFilter = map[a2a.TaskState]bool{"": true, "TASK_STATE_UNSPECIFIED": true, "UNRECOGNIZED": true}

// List returns the tasks most recently updated first, optionally of one context and state, and
// whose status changed at or after StatusTimestampAfter. PageSize 0 is unset (50). The page
// token names the last task of the previous page, so that pages do not shift as tasks come and
// go. A bad argument is -32602 with details.
func (s *sqlTaskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	size := req.PageSize
	if size == 0 {
		size = defaultPageSize
	}
	if size < 1 || size > maxPageSize {
		return nil, invalidParams(fmt.Sprintf("pageSize must be from 1 to %d (unset: %d), got %d", maxPageSize, defaultPageSize, size))
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, invalidParams(fmt.Sprintf("historyLength must be 0 or more (unset: the whole history), got %d", *req.HistoryLength))
	}
	where, args := "1=1", []any{}
	if req.ContextID != "" {
		where += " AND context_id = ?"
		args = append(args, req.ContextID)
	}
	if !noStatusFilter[req.Status] {
		if !slices.Contains(listableStates, req.Status) {
			names := make([]string, len(listableStates))
			for i, st := range listableStates {
				names[i] = string(st)
			}
			return nil, invalidParams(fmt.Sprintf("status must be one of %s, got %q", strings.Join(names, ", "), req.Status))
		}
		where += " AND state = ?"
		args = append(args, string(req.Status))
	}
	if req.StatusTimestampAfter != nil {
		where += " AND status_ns >= ?"
		args = append(args, req.StatusTimestampAfter.UnixNano())
	}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM a2a_tasks WHERE `+where, args...).Scan(&total); err != nil {
		return nil, fmt.Errorf("a2a: listing tasks: %w", err)
	}
	if req.PageToken != "" {
		ns, id, ok := decodePageToken(req.PageToken)
		if !ok {
			return nil, invalidParams(fmt.Sprintf("pageToken %q is not one this server gave: pass the nextPageToken of the previous page", req.PageToken))
		}
		where += " AND (updated_ns < ? OR (updated_ns = ? AND id < ?))"
		args = append(args, ns, ns, id)
	}
	// One more than a page, to know whether another follows.
	rows, err := s.db.QueryContext(ctx, `SELECT updated_ns, task FROM a2a_tasks WHERE `+where+
		` ORDER BY updated_ns DESC, id DESC LIMIT ?`, append(args, size+1)...)
	if err != nil {
		return nil, fmt.Errorf("a2a: listing tasks: %w", err)
	}
	defer rows.Close()
	resp := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, 0, size), TotalSize: total, PageSize: size}
	var lastNs int64
	more := false
	for rows.Next() {
		if len(resp.Tasks) == size {
			more = true
			break
		}
		var raw string
		if err := rows.Scan(&lastNs, &raw); err != nil {
			return nil, fmt.Errorf("a2a: listing tasks: %w", err)
		}
		var t a2a.Task
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			return nil, fmt.Errorf("a2a: decoding a listed task: %w", err)
		}
		// A running task's newest pieces are in memory.
		if lt, _, ok := s.liveCopy(t.ID); ok {
			t = *lt
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		if req.HistoryLength != nil && len(t.History) > *req.HistoryLength {
			t.History = t.History[len(t.History)-*req.HistoryLength:]
		}
		resp.Tasks = append(resp.Tasks, &t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("a2a: listing tasks: %w", err)
	}
	if more {
		resp.NextPageToken = encodePageToken(lastNs, string(resp.Tasks[len(resp.Tasks)-1].ID))
	}
	return resp, nil
}

// A page token is the position of the last task listed: its updated_ns and id, base64url-encoded.
func encodePageToken(ns int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ns, 10) + "/" + id))
}

func decodePageToken(tok string) (ns int64, id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, "", false
	}
	n, id, found := strings.Cut(string(b), "/")
	if !found || id == "" {
		return 0, "", false
	}
	ns, err = strconv.ParseInt(n, 10, 64)
	return ns, id, err == nil
}

// unfinishedIn is the states of a task that a node left behind runs in.
const unfinishedIn = "state IN (?, ?)"

var unfinishedStates = []any{string(a2a.TaskStateSubmitted), string(a2a.TaskStateWorking)}

// unfinishedNodes lists the nodes with tasks submitted or working.
func (s *sqlTaskStore) unfinishedNodes(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT node FROM a2a_tasks WHERE `+unfinishedIn, unfinishedStates...)
	if err != nil {
		return nil, fmt.Errorf("a2a: finding unfinished tasks: %w", err)
	}
	defer rows.Close()
	var nodes []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("a2a: finding unfinished tasks: %w", err)
		}
		nodes = append(nodes, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("a2a: finding unfinished tasks: %w", err)
	}
	return nodes, nil
}

// failNode marks the tasks node left submitted or working as failed, and returns how many it
// marked. Each is written only if it is as read (one statement checks its version): a task the
// node, or another node doing the same, changed meanwhile is left as that made it.
func (s *sqlTaskStore) failNode(ctx context.Context, node, why string) (int, error) {
	type leftover struct {
		version int64
		task    a2a.Task
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version, task FROM a2a_tasks WHERE node = ? AND `+unfinishedIn,
		append([]any{node}, unfinishedStates...)...)
	if err != nil {
		return 0, fmt.Errorf("a2a: finding the unfinished tasks of node %q: %w", node, err)
	}
	var left []leftover
	for rows.Next() {
		var l leftover
		var raw string
		if err := rows.Scan(&l.version, &raw); err != nil {
			rows.Close()
			return 0, fmt.Errorf("a2a: finding the unfinished tasks of node %q: %w", node, err)
		}
		if err := json.Unmarshal([]byte(raw), &l.task); err != nil {
			rows.Close()
			return 0, fmt.Errorf("a2a: decoding an unfinished task of node %q: %w", node, err)
		}
		left = append(left, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("a2a: finding the unfinished tasks of node %q: %w", node, err)
	}
	failed := 0
	for _, l := range left {
		task := &l.task
		now := s.now()
		task.Status = a2a.TaskStatus{
			State:     a2a.TaskStateFailed,
			Message:   a2a.NewMessageForTask(a2a.MessageRoleAgent, task, a2a.NewTextPart(why)),
			Timestamp: &now,
		}
		b, err := json.Marshal(task)
		if err != nil {
			return failed, fmt.Errorf("a2a: encoding task %s: %w", task.ID, err)
		}
		res, err := s.w.exec(ctx, `UPDATE a2a_tasks SET state = ?, version = version + 1, updated_ns = ?, task = ?, status_ns = ?
			WHERE id = ? AND version = ? AND node = ?`,
			string(a2a.TaskStateFailed), now.UnixNano(), string(b), now.UnixNano(), string(task.ID), l.version, node)
		if err != nil {
			return failed, fmt.Errorf("a2a: failing task %s: %w", task.ID, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			failed++
		}
	}
	return failed, nil
}
