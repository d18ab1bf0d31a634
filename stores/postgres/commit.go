package postgres

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// commitAttempts bounds how often one Commit reruns its transaction after a
// deadlock, a serialization failure or a unique violation (nothing applied
// each time).
const commitAttempts = 4

// sqlLockScopes locks the batch's existing scope rows FOR UPDATE, in the
// fixed order (kind, name): LockRows runs above the Sort, so two batches
// take their common rows in one order and never deadlock on them.
const sqlLockScopes = `SELECT s.kind, s.name, s.version, s.deleted, s.row_start, s.row_end
	FROM conform_scopes s
	JOIN unnest($2::smallint[], $3::bytea[]) AS k(kind, name) ON s.kind = k.kind AND s.name = k.name
	WHERE s.realm = $1
	ORDER BY s.kind, s.name
	FOR UPDATE OF s`

// sqlCommitReads reads the realm's highest token and whether the commit id
// landed.
const sqlCommitReads = `SELECT f.token,
		EXISTS (SELECT 1 FROM conform_commits c WHERE c.realm = $1 AND c.commit_id = $2)
	FROM conform_fences f WHERE f.realm = $1`

const sqlScopeInsert = `INSERT INTO conform_scopes
	(realm, kind, name, version, commit_id, head, deleted, row_start, row_end)
	VALUES ($1, $2, $3, $4, $5, $6, false, $7, $8)`

const sqlScopeUpdate = `UPDATE conform_scopes
	SET version = $4, commit_id = $5, head = CASE WHEN $6::boolean THEN $7::bytea ELSE head END,
		deleted = $8, row_start = $9, row_end = $10
	WHERE realm = $1 AND kind = $2 AND name = $3`

const sqlRowsRemove = `DELETE FROM conform_rows
	WHERE realm = $1 AND kind = $2 AND name = $3 AND (idx < $4 OR idx >= $5)`

const sqlRowsAppend = `INSERT INTO conform_rows (realm, kind, name, idx, data)
	SELECT $1, $2, $3, $4::bigint + t.ord - 1, t.data
	FROM unnest($5::bytea[]) WITH ORDINALITY AS t(data, ord)`

const sqlCommitRecord = `INSERT INTO conform_commits (realm, commit_id, token) VALUES ($1, $2, $3)`

// sqlFenceShared takes the realm's fence lock in shared mode until the
// transaction ends; sqlFenceCheck, run after it (a new snapshot at READ
// COMMITTED), fails with division_by_zero (22012) unless $2 still is the
// realm's highest token, which aborts the transaction and skips the
// COMMIT queued after it.
const (
	sqlFenceShared = `SELECT pg_advisory_xact_lock_shared($1)`
	sqlFenceCheck  = `SELECT 1 / coalesce((SELECT (token = $2)::int FROM conform_fences WHERE realm = $1), 0)`
)

// errRetry marks an attempt that applied nothing and may run again.
type errRetry struct{ cause error }

func (e *errRetry) Error() string { return "retryable: " + e.cause.Error() }

// Commit applies one batch atomically, in one transaction on one
// connection, in two round trips; see the package doc for why it is
// correct. In order:
//   - BEGIN; lock the batch's scope rows FOR UPDATE in (kind, name) order;
//     read whether the commit id landed and the realm's highest token;
//   - instore.CommitLocked;
//   - a commit id that landed returns nil and changes nothing (it is read
//     after the scope locks, so a retry racing its first send waits for it);
//   - a token below the highest is *FencedOutError, one never issued
//     *InvalidError; a wrong Previous *ConflictError; a create of a deleted
//     name *InvalidError (checkUpdates);
//   - instore.CommitBeforePoint (no realm-wide lock is held there);
//   - one pipeline: the scopes' rows, heads and versions, the commit
//     record, the fence lock in shared mode, the token checked again, and
//     COMMIT, the commit point;
//   - instore.CommitAfterPoint.
//
// Errors: before the last pipeline is sent nothing is applied
// (*UnavailableError, or ctx.Err()); a server error in it (a failed fence
// check: *FencedOutError) also applies nothing; a lost answer to it is
// *IndeterminateError. A deadlock, serialization failure or unique
// violation reruns the transaction, at most commitAttempts times.
func (s *Store) Commit(ctx context.Context, b *hoststore.CommitBatch) error {
	if err := checkBatch(b); err != nil {
		return err
	}
	t := newTxn(s, b)
	var err error
	for range commitAttempts {
		err = t.attempt(ctx)
		var r *errRetry
		if !errors.As(err, &r) {
			return err
		}
	}
	return mapErr(ctx, "commit", err)
}

// checkBatch refuses a batch NewCommitBatch did not build, and a token
// that cannot have been issued.
func checkBatch(b *hoststore.CommitBatch) error {
	switch {
	case b == nil:
		return &hoststore.InvalidError{Detail: "commit of a nil batch"}
	case b.CommitID().Validate() != nil:
		return &hoststore.InvalidError{Detail: "commit: " + b.CommitID().Validate().Error()}
	case b.Len() == 0:
		return &hoststore.InvalidError{Detail: "commit of a batch with no update"}
	case b.Token() == 0 || b.Token() > 1<<63-1:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("commit with token %d, which was never issued", b.Token())}
	}
	return nil
}

// txn is one Commit: the batch's updates in their order, and the lock
// order over them.
type txn struct {
	s     *Store
	id    hoststore.CommitID
	token int64
	ups   []hoststore.ScopeUpdate
	order []int // indices of ups sorted by (kind, name bytes)
	kinds []int16
	names [][]byte
}

func newTxn(s *Store, b *hoststore.CommitBatch) *txn {
	t := &txn{s: s, id: b.CommitID(), token: int64(b.Token()), ups: b.Updates()}
	t.order = make([]int, len(t.ups))
	for i := range t.order {
		t.order[i] = i
	}
	slices.SortFunc(t.order, func(a, b int) int {
		x, y := t.ups[a].Scope, t.ups[b].Scope
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), bytes.Compare([]byte(x.Name), []byte(y.Name)))
	})
	for _, i := range t.order {
		t.kinds = append(t.kinds, int16(t.ups[i].Scope.Kind))
		t.names = append(t.names, []byte(t.ups[i].Scope.Name))
	}
	return t
}

// attempt runs the transaction once. An *errRetry means nothing was applied
// and the caller may run it again.
func (t *txn) attempt(ctx context.Context) error {
	s := t.s
	c, err := s.get(ctx, "commit")
	if err != nil {
		return err
	}
	cur, landed, highest, err := t.lock(ctx, c)
	if err != nil {
		s.release(ctx, c)
		if retryable(err) {
			return &errRetry{err}
		}
		return mapErr(ctx, "commit", err)
	}
	if err := instore.At(ctx, instore.CommitLocked, t.id); err != nil {
		s.pool.drop(c)
		return err
	}
	if err := t.check(cur, landed, highest); err != nil || landed {
		s.release(ctx, c)
		return err
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, t.id); err != nil {
		s.pool.drop(c)
		return err
	}
	if c.killed.Load() {
		s.release(ctx, c)
		return &hoststore.UnavailableError{Detail: "postgres commit: the handle was killed before COMMIT was sent"}
	}
	if err := ctx.Err(); err != nil {
		s.release(ctx, c)
		return err
	}
	w := t.writes(cur)
	err = runBatch(ctx, c, w, readN(w.Len()))
	switch {
	case err == nil:
		s.release(ctx, c)
	case sqlState(err) == codeDivisionByZero:
		s.release(ctx, c)
		return t.fencedOut(ctx)
	case retryable(err):
		s.release(ctx, c)
		return &errRetry{err}
	default:
		s.release(ctx, c)
		return unknown(ctx, "commit", err)
	}
	return instore.At(ctx, instore.CommitAfterPoint, t.id)
}

// lock runs the first round trip: BEGIN, the scope locks and the reads.
// cur is aligned with t.ups.
func (t *txn) lock(ctx context.Context, c *conn) (cur []scopeRow, landed bool, highest int64, err error) {
	realm := t.s.f.realm
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlLockScopes, realm, t.kinds, t.names)
	b.Queue(sqlCommitReads, realm, string(t.id))
	cur = make([]scopeRow, len(t.ups))
	err = runBatch(ctx, c, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				kind int16
				name []byte
				r    = scopeRow{exists: true}
			)
			if err := rows.Scan(&kind, &name, &r.version, &r.deleted, &r.start, &r.end); err != nil {
				rows.Close()
				return err
			}
			if i := t.index(kind, name); i >= 0 {
				cur[i] = r
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&highest, &landed); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("realm %q has no fence row (dropped?)", realm)
			}
			return err
		}
		return nil
	})
	return cur, landed, highest, err
}

// index returns the position in t.ups of the scope (kind, name), or -1.
func (t *txn) index(kind int16, name []byte) int {
	for i, u := range t.ups {
		if int16(u.Scope.Kind) == kind && string(u.Scope.Name) == string(name) {
			return i
		}
	}
	return -1
}

// check returns what the batch meets before it writes: nil when its commit
// id landed (the caller returns nil) or when it may write.
func (t *txn) check(cur []scopeRow, landed bool, highest int64) error {
	if landed {
		return nil
	}
	if err := tokenErr("commit", hoststore.FenceToken(t.token), highest); err != nil {
		return err
	}
	return checkUpdates(t.ups, cur)
}

// writes builds the last round trip: every update's writes in lock order,
// the commit record, the fence check and COMMIT.
func (t *txn) writes(cur []scopeRow) *pgx.Batch {
	realm := t.s.f.realm
	b := &pgx.Batch{}
	for _, i := range t.order {
		st := plan(cur[i], t.ups[i])
		u, a := st.u, st.after
		kind, name := int16(u.Scope.Kind), []byte(u.Scope.Name)
		var head []byte
		if u.Head != nil {
			head = nonNil(*u.Head)
		}
		if !st.before.exists {
			b.Queue(sqlScopeInsert, realm, kind, name, a.version, string(t.id), head, a.start, a.end)
		} else {
			b.Queue(sqlScopeUpdate, realm, kind, name, a.version, string(t.id), u.Head != nil || u.Delete, head, a.deleted, a.start, a.end)
		}
		if st.remove {
			b.Queue(sqlRowsRemove, realm, kind, name, st.dropBelow, st.dropFrom)
		}
		if len(u.Append) > 0 {
			b.Queue(sqlRowsAppend, realm, kind, name, st.appendAt, u.Append)
		}
	}
	b.Queue(sqlCommitRecord, realm, string(t.id), t.token)
	b.Queue(sqlFenceShared, t.s.f.lockKey)
	b.Queue(sqlFenceCheck, realm, t.token)
	b.Queue("COMMIT")
	return b
}

// readN reads n results of a batch, stopping at the first error.
func readN(n int) func(pgx.BatchResults) error {
	return func(br pgx.BatchResults) error {
		for range n {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	}
}

// fencedOut returns the error of a batch whose fence check failed: the
// realm's token moved on after the batch read it.
func (t *txn) fencedOut(ctx context.Context) error {
	var highest int64
	err := t.s.query(ctx, "commit", func(c *conn) error {
		return c.QueryRow(ctx, sqlFenceToken, t.s.f.realm).Scan(&highest)
	})
	if err != nil {
		return err
	}
	if err := tokenErr("commit", hoststore.FenceToken(t.token), highest); err != nil {
		return err
	}
	return &hoststore.UnavailableError{Detail: "postgres commit: the fence check failed, yet the token is the highest"}
}
