package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// seedIndex orders the seed tasks by their last change, for pruning by age and count.
const seedIndex = `CREATE INDEX IF NOT EXISTS a2a_seed_tasks_updated ON a2a_seed_tasks(updated_ns, id)`

// seedKeep is the bookkeeping of seed task pruning: how many tasks the table holds, counted
// once, then kept as this handler inserts and deletes them, so that a new task costs an
// indexed delete of the oldest rows rather than a count of all of them.
type seedKeep struct {
	mu     sync.Mutex // held across an insert and its pruning, so that stored stays exact
	ready  bool       // the index exists and stored was counted
	stored int
}

// write stores t as of updated (the handler's clock, which pruning by age reads too).
func (s *seedTasks) write(ctx context.Context, t *seedTask, updated time.Time) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("a2a: encoding task %s: %w", t.ID, err)
	}
	_, err = s.db.ExecContext(ctx,
		`INSERT INTO a2a_seed_tasks(id, state, updated_ns, task) VALUES(?, ?, ?, ?)
		 ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated_ns = excluded.updated_ns, task = excluded.task`,
		t.ID, t.Status.State, updated.UnixNano(), string(b))
	if err != nil {
		return fmt.Errorf("a2a: storing task %s: %w", t.ID, err)
	}
	return nil
}

// storeSeedTask writes t as changed at at; a new task (isNew: none was stored under its id)
// then prunes the finished tasks past agent.tasks.keep.age and agent.tasks.keep.count. A failed
// pruning is logged, not the send's failure: the task is stored.
func (h *Handler) storeSeedTask(ctx context.Context, t *seedTask, at time.Time, isNew bool) error {
	if !isNew {
		return h.seed.write(ctx, t, at)
	}
	k := &h.running.keep
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := h.seed.write(ctx, t, at); err != nil {
		return err
	}
	if k.ready {
		k.stored++
	} else if err := h.countSeedTasks(ctx, k); err != nil {
		h.o.Logger.Error("a2a: counting the seed tasks to prune them", "err", err)
		return nil
	}
	if err := h.pruneSeedTasks(ctx, k, at); err != nil {
		h.o.Logger.Error("a2a: pruning the seed tasks", "err", err)
	}
	return nil
}

// countSeedTasks makes the index and counts the table, once per handler.
func (h *Handler) countSeedTasks(ctx context.Context, k *seedKeep) error {
	if _, err := h.seed.db.ExecContext(ctx, seedIndex); err != nil {
		return fmt.Errorf("a2a: indexing the seed tasks: %w", err)
	}
	if err := h.seed.db.QueryRowContext(ctx, `SELECT count(*) FROM a2a_seed_tasks`).Scan(&k.stored); err != nil {
		return fmt.Errorf("a2a: counting the seed tasks: %w", err)
	}
	k.ready = true
	return nil
}

// pruneSeedTasks deletes the tasks finished before now less the keep age, then the oldest
// finished ones past the keep count. Both walk the index from the oldest end only.
func (h *Handler) pruneSeedTasks(ctx context.Context, k *seedKeep, now time.Time) error {
	age, keep := h.o.TasksKeepAge, h.o.TasksKeepCount
	res, err := h.seed.db.ExecContext(ctx,
		`DELETE FROM a2a_seed_tasks WHERE updated_ns < ? AND state IN (?, ?, ?)`,
		now.Add(-age).UnixNano(), stateCompleted, stateCanceled, stateFailed)
	if err != nil {
		return fmt.Errorf("a2a: deleting the seed tasks older than %v: %w", age, err)
	}
	n, _ := res.RowsAffected()
	k.stored -= int(n)
	if over := k.stored - keep; over > 0 {
		res, err := h.seed.db.ExecContext(ctx,
			`DELETE FROM a2a_seed_tasks WHERE id IN (
			   SELECT id FROM a2a_seed_tasks WHERE state IN (?, ?, ?) ORDER BY updated_ns, id LIMIT ?)`,
			stateCompleted, stateCanceled, stateFailed, over)
		if err != nil {
			return fmt.Errorf("a2a: deleting the oldest seed tasks past %d: %w", keep, err)
		}
		m, _ := res.RowsAffected()
		k.stored -= int(m)
		n += m
	}
	if n > 0 {
		h.o.Logger.Debug("a2a: pruned seed tasks", "deleted", n, "kept", k.stored, "keep_age", age, "keep_count", keep)
	}
	return nil
}

// stamp is a seed timestamp.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
