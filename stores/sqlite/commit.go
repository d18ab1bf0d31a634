package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// querier is what the checks read through: a *sql.Tx of either pool.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scopeState is one scope's row as a commit sees it.
type scopeState struct {
	exists     bool
	deleted    bool
	version    hoststore.ScopeVersion
	start, end uint64
}

func readScope(ctx context.Context, q querier, ref hoststore.ScopeRef) (scopeState, error) {
	var st scopeState
	var version, deleted, start, end int64
	err := q.QueryRowContext(ctx,
		`SELECT version, deleted, start_idx, end_idx FROM scopes WHERE kind = ? AND name = ?`,
		int64(ref.Kind), []byte(ref.Name),
	).Scan(&version, &deleted, &start, &end)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st = scopeState{exists: true, deleted: deleted != 0, version: hoststore.ScopeVersion(uint64(version)), start: uint64(start), end: uint64(end)}
	return st, nil
}

// verdict is what the checks decided about a batch: landed (its commit id
// committed before), or refused with a contract error, or
// admitted with the states of its scopes in the order of its updates.
type verdict struct {
	landed bool
	refuse error
	states []scopeState
}

// check reads, through q, everything a commit decides on: the commit id
// (obligation 3), the fence token (obligation 5), and the stored version
// each update's Previous must match (obligation 4). Its error is a
// backend error; a refusal is in the verdict.
func check(ctx context.Context, q querier, b *hoststore.CommitBatch) (verdict, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM commits WHERE commit_id = ?`, string(b.CommitID())).Scan(&one)
	if err == nil {
		return verdict{landed: true}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return verdict{}, err
	}
	var tok int64
	if err := q.QueryRowContext(ctx, `SELECT token FROM fence WHERE id = 1`).Scan(&tok); err != nil {
		return verdict{}, err
	}
	current := hoststore.FenceToken(tok)
	if b.Token() == 0 || b.Token() > current {
		return verdict{refuse: &hoststore.InvalidError{Detail: fmt.Sprintf("commit %q: token %d was never issued (highest is %d)", b.CommitID(), b.Token(), current)}}, nil
	}
	if b.Token() < current {
		return verdict{refuse: &hoststore.FencedOutError{Current: current}}, nil
	}
	updates := b.Updates()
	states := make([]scopeState, len(updates))
	for i, u := range updates {
		st, err := readScope(ctx, q, u.Scope)
		if err != nil {
			return verdict{}, err
		}
		if refuse := admits(b.CommitID(), u, st); refuse != nil {
			return verdict{refuse: refuse}, nil
		}
		states[i] = st
	}
	return verdict{states: states}, nil
}

// admits returns nil when u applies to st, else the contract error that
// refuses the batch.
func admits(id hoststore.CommitID, u hoststore.ScopeUpdate, st scopeState) error {
	live := st.exists && !st.deleted
	switch {
	case u.Previous == nil && st.deleted:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("commit %q: %s was deleted; its name is not created again", id, u.Scope)}
	case u.Previous == nil && live:
		return &hoststore.ConflictError{Scope: u.Scope, Current: hoststore.Ptr(st.version)}
	case u.Previous != nil && !live:
		return &hoststore.ConflictError{Scope: u.Scope}
	case u.Previous != nil && *u.Previous != st.version:
		return &hoststore.ConflictError{Scope: u.Scope, Current: hoststore.Ptr(st.version)}
	}
	return nil
}

// Commit applies one batch atomically in one short write transaction; see the
// package doc for the sites of the failpoints and why no lock is held at them.
// nil means durable (synchronous=FULL). A commit id that landed before returns
// nil and changes nothing. It refuses with *hoststore.ConflictError,
// *hoststore.FencedOutError or *hoststore.InvalidError, returns
// *hoststore.UnavailableError when nothing was applied and
// *hoststore.IndeterminateError when COMMIT failed.
func (s *Store) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	octx, done, err := s.db.Call(ctx, "commit", sqlitedb.Batch(b))
	if err != nil {
		return err
	}
	defer done()
	id := b.CommitID()
	if err := instore.At(ctx, instore.CommitLocked, id); err != nil {
		return err
	}
	v, err := s.precheck(octx, b)
	if err != nil {
		return s.db.Unavailable(ctx, "commit: precheck", err)
	}
	if v.landed {
		return nil
	}
	if v.refuse != nil {
		return v.refuse
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	landed, err := s.apply(ctx, octx, b)
	if err != nil || landed {
		return err
	}
	if err := instore.At(ctx, instore.CommitAfterPoint, id); err != nil {
		return err
	}
	if s.db.Killed() {
		return &hoststore.IndeterminateError{Detail: fmt.Sprintf("commit %q: the handle was killed after COMMIT; the answer is lost", id)}
	}
	return nil
}

// precheck runs the checks in a read-only snapshot, without the write lock.
func (s *Store) precheck(ctx context.Context, b *hoststore.CommitBatch) (verdict, error) {
	tx, err := s.db.Read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return verdict{}, err
	}
	v, err := check(ctx, tx, b)
	if rerr := tx.Rollback(); err == nil && rerr != nil {
		err = rerr
	}
	return v, err
}

// apply runs the write transaction: check again, apply, COMMIT. landed
// reports a commit id that another attempt committed meanwhile. ctx is the
// caller's, octx the call's (ended by Kill too).
func (s *Store) apply(ctx, octx context.Context, b *hoststore.CommitBatch) (landed bool, err error) {
	tx, err := s.db.Write.BeginTx(octx, nil)
	if err != nil {
		return false, s.db.Unavailable(ctx, "commit: begin", err)
	}
	v, err := check(octx, tx, b)
	if err != nil {
		rollback(tx)
		return false, s.db.Unavailable(ctx, "commit: check", err)
	}
	if v.landed || v.refuse != nil {
		rollback(tx)
		return v.landed, v.refuse
	}
	if err := write(octx, tx, b, v.states); err != nil {
		rollback(tx)
		return false, s.db.Unavailable(ctx, "commit: write", err)
	}
	return false, s.commitTx(ctx, tx)
}
