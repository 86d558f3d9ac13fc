package reminders

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/devicectl/devicectl/agent/memory"
)

// State is where a reminder is in its life.
type State string

const (
	Pending  State = "pending"  // waiting for its next occurrence
	Done     State = "done"     // said (a one-off)
	Missed   State = "missed"   // a one-off whose device was away past the grace period
	Canceled State = "canceled" // canceled before it was due
)

// Reminder is one reminder or timer.
type Reminder struct {
	ID      string
	UserID  string
	MAC     string // the device that says it
	Text    string // what to remind of; "" for a plain timer
	Timer   bool   // a countdown ("计时5分钟"): said as the time being up
	Length  time.Duration
	Lang    string // zh or en: the language it is said in
	Due     time.Time
	Every   *Every // nil for a one-off
	Task    string // the A2A task that set it, if any
	State   State
	Created time.Time
}

// MissedOccurrence is an occurrence whose device was away past the grace period, kept until the
// device's next turn tells of it.
type MissedOccurrence struct {
	Reminder
	At time.Time // when it was due
}

var schema = []string{
	`CREATE TABLE reminders (
		id            TEXT PRIMARY KEY,
		user_id       TEXT NOT NULL,
		mac           TEXT NOT NULL,
		text          TEXT NOT NULL,
		timer         INTEGER NOT NULL,
		length_ms     INTEGER NOT NULL,
		lang          TEXT NOT NULL,
		due_ms        INTEGER NOT NULL,
		every         TEXT NOT NULL,
		task          TEXT NOT NULL,
		state         TEXT NOT NULL,
		created_ms    INTEGER NOT NULL,
		claimed_until INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX reminders_due ON reminders (state, due_ms);
	CREATE INDEX reminders_user ON reminders (user_id, state);
	CREATE TABLE reminders_missed (
		seq      INTEGER PRIMARY KEY AUTOINCREMENT,
		id       TEXT NOT NULL,
		mac      TEXT NOT NULL,
		user_id  TEXT NOT NULL,
		text     TEXT NOT NULL,
		timer    INTEGER NOT NULL,
		length_ms INTEGER NOT NULL,
		lang     TEXT NOT NULL,
		due_ms   INTEGER NOT NULL,
		told     INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX reminders_missed_mac ON reminders_missed (mac, told);`,
}

// Store keeps reminders in the agent's database.
type Store struct {
	db *sql.DB
}

// OpenStore creates the reminders' tables in db when missing.
func OpenStore(ctx context.Context, db *sql.DB) (*Store, error) {
	if err := memory.Migrate(ctx, db, "reminders", schema); err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return "r-" + hex.EncodeToString(b[:])
}

const columns = `id, user_id, mac, text, timer, length_ms, lang, due_ms, every, task, state, created_ms`

// Add stores r as pending, giving it an id, and returns it.
func (s *Store) Add(ctx context.Context, r Reminder) (Reminder, error) {
	r.ID, r.State = newID(), Pending
	every := ""
	if r.Every != nil {
		every = r.Every.marshal()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO reminders (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.UserID, r.MAC, r.Text, r.Timer, r.Length.Milliseconds(), r.Lang, r.Due.UnixMilli(), every, r.Task, string(r.State), r.Created.UnixMilli())
	if err != nil {
		return Reminder{}, fmt.Errorf("reminders: adding: %w", err)
	}
	return r, nil
}

func scan(rows *sql.Rows, loc *time.Location) ([]Reminder, error) {
	defer rows.Close()
	var out []Reminder
	for rows.Next() {
		var r Reminder
		var lengthMS, dueMS, createdMS int64
		var every, state string
		if err := rows.Scan(&r.ID, &r.UserID, &r.MAC, &r.Text, &r.Timer, &lengthMS, &r.Lang, &dueMS, &every, &r.Task, &state, &createdMS); err != nil {
			return nil, fmt.Errorf("reminders: reading: %w", err)
		}
		r.Length = time.Duration(lengthMS) * time.Millisecond
		r.Due = time.UnixMilli(dueMS).In(loc)
		r.Created = time.UnixMilli(createdMS).In(loc)
		r.State = State(state)
		if every != "" {
			r.Every = new(Every)
			if err := json.Unmarshal([]byte(every), r.Every); err != nil {
				return nil, fmt.Errorf("reminders: %s's repeat %q: %w", r.ID, every, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Get returns the reminder id, in any state.
func (s *Store) Get(ctx context.Context, id string, loc *time.Location) (Reminder, bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM reminders WHERE id = ?`, id)
	if err != nil {
		return Reminder{}, false, fmt.Errorf("reminders: %w", err)
	}
	rs, err := scan(rows, loc)
	if err != nil || len(rs) == 0 {
		return Reminder{}, false, err
	}
	return rs[0], true, nil
}

// List returns userID's pending reminders, the soonest first.
func (s *Store) List(ctx context.Context, userID string, loc *time.Location) ([]Reminder, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM reminders WHERE user_id = ? AND state = ? ORDER BY due_ms, id`, userID, string(Pending))
	if err != nil {
		return nil, fmt.Errorf("reminders: listing: %w", err)
	}
	return scan(rows, loc)
}

// ListDevice returns the pending reminders a device will say, the soonest first.
func (s *Store) ListDevice(ctx context.Context, mac string, loc *time.Location) ([]Reminder, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM reminders WHERE mac = ? AND state = ? ORDER BY due_ms, id`, mac, string(Pending))
	if err != nil {
		return nil, fmt.Errorf("reminders: listing: %w", err)
	}
	return scan(rows, loc)
}

// Cancel cancels a pending reminder; userID, when not "", must own it. It reports whether one
// was canceled.
func (s *Store) Cancel(ctx context.Context, userID, id string) (bool, error) {
	q := `UPDATE reminders SET state = ? WHERE id = ? AND state = ?`
	args := []any{string(Canceled), id, string(Pending)}
	if userID != "" {
		q += ` AND user_id = ?`
		args = append(args, userID)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("reminders: canceling: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Due returns pending occurrences due by now that no process holds a claim on.
func (s *Store) Due(ctx context.Context, now time.Time, loc *time.Location) ([]Reminder, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM reminders WHERE state = ? AND due_ms <= ? AND claimed_until <= ? ORDER BY due_ms LIMIT 100`,
		string(Pending), now.UnixMilli(), now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("reminders: due: %w", err)
	}
	return scan(rows, loc)
}

// NextDue returns when the next pending occurrence is due, or its claim lapses.
func (s *Store) NextDue(ctx context.Context) (time.Time, bool, error) {
	var ms sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MIN(MAX(due_ms, claimed_until)) FROM reminders WHERE state = ?`, string(Pending)).Scan(&ms); err != nil {
		return time.Time{}, false, fmt.Errorf("reminders: next due: %w", err)
	}
	return time.UnixMilli(ms.Int64), ms.Valid, nil
}

// Claim takes r's current occurrence for this process until until: of several processes on one
// store, exactly one gets true for an occurrence, so it is said once. The claim lapses at until
// if its holder dies before settling it.
func (s *Store) Claim(ctx context.Context, r Reminder, now, until time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE reminders SET claimed_until = ? WHERE id = ? AND state = ? AND due_ms = ? AND claimed_until <= ?`,
		until.UnixMilli(), r.ID, string(Pending), r.Due.UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("reminders: claiming %s: %w", r.ID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Release gives a claimed occurrence back, to be tried again at retry (its device is away, within
// the grace period).
func (s *Store) Release(ctx context.Context, r Reminder, retry time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE reminders SET claimed_until = ? WHERE id = ? AND due_ms = ?`, retry.UnixMilli(), r.ID, r.Due.UnixMilli())
	if err != nil {
		return fmt.Errorf("reminders: releasing %s: %w", r.ID, err)
	}
	return nil
}

// Settle ends a claimed occurrence: said, or missed (then recorded for the device's next turn).
// A repeating reminder moves to its next occurrence after now; a one-off is done or missed. It
// reports false when the reminder was canceled meanwhile: then nothing is to be said.
func (s *Store) Settle(ctx context.Context, r Reminder, missed bool, now time.Time, loc *time.Location) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("reminders: settling %s: %w", r.ID, err)
	}
	defer tx.Rollback()
	if missed {
		if _, err := tx.ExecContext(ctx, `INSERT INTO reminders_missed (id, mac, user_id, text, timer, length_ms, lang, due_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.MAC, r.UserID, r.Text, r.Timer, r.Length.Milliseconds(), r.Lang, r.Due.UnixMilli()); err != nil {
			return false, fmt.Errorf("reminders: recording %s as missed: %w", r.ID, err)
		}
	}
	var res sql.Result
	if r.Every != nil {
		next := r.Every.Next(now, loc)
		res, err = tx.ExecContext(ctx, `UPDATE reminders SET due_ms = ?, claimed_until = 0 WHERE id = ? AND due_ms = ? AND state = ?`,
			next.UnixMilli(), r.ID, r.Due.UnixMilli(), string(Pending))
	} else {
		state := Done
		if missed {
			state = Missed
		}
		res, err = tx.ExecContext(ctx, `UPDATE reminders SET state = ?, claimed_until = 0 WHERE id = ? AND due_ms = ? AND state = ?`,
			string(state), r.ID, r.Due.UnixMilli(), string(Pending))
	}
	if err != nil {
		return false, fmt.Errorf("reminders: settling %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil // canceled meanwhile: nothing to move on
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("reminders: settling %s: %w", r.ID, err)
	}
	return true, nil
}

// Unsettle puts back an occurrence Settle moved on as said, which did not reach its device after
// all, claimed until retry. A reminder canceled meanwhile stays canceled.
func (s *Store) Unsettle(ctx context.Context, r Reminder, retry time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE reminders SET state = ?, due_ms = ?, claimed_until = ? WHERE id = ? AND state IN (?, ?)`,
		string(Pending), r.Due.UnixMilli(), retry.UnixMilli(), r.ID, string(Pending), string(Done))
	if err != nil {
		return fmt.Errorf("reminders: putting back %s: %w", r.ID, err)
	}
	return nil
}

// TakeMissed returns the missed occurrences of mac not yet told, and marks them told: of several
// processes, one gets each.
func (s *Store) TakeMissed(ctx context.Context, mac string, loc *time.Location) ([]MissedOccurrence, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, id, user_id, text, timer, length_ms, lang, due_ms FROM reminders_missed WHERE mac = ? AND told = 0 ORDER BY due_ms`, mac)
	if err != nil {
		return nil, fmt.Errorf("reminders: missed: %w", err)
	}
	type row struct {
		seq int64
		m   MissedOccurrence
	}
	var found []row
	for rows.Next() {
		var x row
		var dueMS, lengthMS int64
		if err := rows.Scan(&x.seq, &x.m.ID, &x.m.UserID, &x.m.Text, &x.m.Timer, &lengthMS, &x.m.Lang, &dueMS); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reminders: missed: %w", err)
		}
		x.m.MAC, x.m.At = mac, time.UnixMilli(dueMS).In(loc)
		x.m.Length = time.Duration(lengthMS) * time.Millisecond
		found = append(found, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []MissedOccurrence
	for _, x := range found {
		res, err := s.db.ExecContext(ctx, `UPDATE reminders_missed SET told = 1 WHERE seq = ? AND told = 0`, x.seq)
		if err != nil {
			return out, fmt.Errorf("reminders: missed: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out = append(out, x.m)
		}
	}
	return out, nil
}

// CancelWhere cancels userID's pending reminders whose text holds match ("" cancels them all),
// and returns those it canceled.
func (s *Store) CancelWhere(ctx context.Context, userID, match string, loc *time.Location) ([]Reminder, error) {
	all, err := s.List(ctx, userID, loc)
	if err != nil {
		return nil, err
	}
	var out []Reminder
	for _, r := range all {
		if match != "" && !strings.Contains(strings.ToLower(r.Text), strings.ToLower(match)) {
			continue
		}
		ok, err := s.Cancel(ctx, userID, r.ID)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// ErrNotFound reports a reminder id that names no pending reminder.
var ErrNotFound = errors.New("reminders: no such pending reminder")
