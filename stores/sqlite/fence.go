package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// fenceState is the fence row and "now" on the realm's clock, read in one
// write transaction.
type fenceState struct {
	token  hoststore.FenceToken
	expiry int64 // lease expiry, ns on the realm's clock
	offset int64 // the realm's clock offset, ns
	now    int64 // wall clock plus offset, ns
}

func readFence(ctx context.Context, tx *sql.Tx) (fenceState, error) {
	var st fenceState
	var tok int64
	err := tx.QueryRowContext(ctx,
		`SELECT f.token, f.lease_expiry, c.offset_ns FROM fence f, clock c WHERE f.id = 1 AND c.id = 1`,
	).Scan(&tok, &st.expiry, &st.offset)
	if err != nil {
		return st, err
	}
	st.token = hoststore.FenceToken(tok)
	st.now = time.Now().UnixNano() + st.offset
	return st, nil
}

// live reports whether a holder's lease lasts beyond now, and how long.
func (st fenceState) live() (time.Duration, bool) {
	if st.token == 0 || st.expiry <= st.now {
		return 0, false
	}
	return time.Duration(st.expiry - st.now), true
}

// AcquireFence issues the next token and starts its lease now on the
// realm's clock, in one short write transaction. With Exclusive it returns
// *hoststore.HeldError while another lease is live; with Takeover it always
// issues a token and returns what was left of a live holder's lease.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	octx, done, err := s.db.Call(ctx, "acquire", sqlitedb.Mode(mode))
	if err != nil {
		return hoststore.FenceGrant{}, err
	}
	defer done()
	tx, err := s.db.Write.BeginTx(octx, nil)
	if err != nil {
		return hoststore.FenceGrant{}, s.db.Unavailable(ctx, "acquire: begin", err)
	}
	st, err := readFence(octx, tx)
	if err != nil {
		rollback(tx)
		return hoststore.FenceGrant{}, s.db.Unavailable(ctx, "acquire: read fence", err)
	}
	remaining, live := st.live()
	if live && mode == hoststore.Exclusive {
		rollback(tx)
		return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: st.token, Remaining: remaining}
	}
	next := st.token + 1
	lease := st.now + int64(s.f.FenceTiming().Lease())
	if _, err := tx.ExecContext(octx, `UPDATE fence SET token = ?, lease_expiry = ? WHERE id = 1`, int64(next), lease); err != nil {
		rollback(tx)
		return hoststore.FenceGrant{}, s.db.Unavailable(ctx, "acquire: write fence", err)
	}
	if err := s.commitTx(ctx, tx); err != nil {
		return hoststore.FenceGrant{}, err
	}
	return hoststore.FenceGrant{Token: next, SupersededLease: remaining}, nil
}

// RenewFence starts a fresh lease now for the holder of token, also after
// its lease ran out. A token never issued (0 or above the highest) returns
// *hoststore.InvalidError; a superseded one *hoststore.FencedOutError.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	octx, done, err := s.db.Call(ctx, "renew")
	if err != nil {
		return err
	}
	defer done()
	tx, err := s.db.Write.BeginTx(octx, nil)
	if err != nil {
		return s.db.Unavailable(ctx, "renew: begin", err)
	}
	st, err := readFence(octx, tx)
	if err != nil {
		rollback(tx)
		return s.db.Unavailable(ctx, "renew: read fence", err)
	}
	if token == 0 || token > st.token {
		rollback(tx)
		return &hoststore.InvalidError{Detail: fmt.Sprintf("renew: token %d was never issued (highest is %d)", token, st.token)}
	}
	if token < st.token {
		rollback(tx)
		return &hoststore.FencedOutError{Current: st.token}
	}
	lease := st.now + int64(s.f.FenceTiming().Lease())
	if _, err := tx.ExecContext(octx, `UPDATE fence SET lease_expiry = ? WHERE id = 1`, lease); err != nil {
		rollback(tx)
		return s.db.Unavailable(ctx, "renew: write fence", err)
	}
	return s.commitTx(ctx, tx)
}

// lapse moves the realm's clock offset just past the recorded lease.
func (s *Store) lapse(ctx context.Context) error {
	octx, done := s.db.Op(ctx)
	defer done()
	tx, err := s.db.Write.BeginTx(octx, nil)
	if err != nil {
		return s.db.Unavailable(ctx, "lapse leases: begin", err)
	}
	st, err := readFence(octx, tx)
	if err != nil {
		rollback(tx)
		return s.db.Unavailable(ctx, "lapse leases: read fence", err)
	}
	if st.expiry < st.now {
		rollback(tx)
		return nil
	}
	offset := st.offset + (st.expiry - st.now) + int64(time.Millisecond)
	if _, err := tx.ExecContext(octx, `UPDATE clock SET offset_ns = ? WHERE id = 1`, offset); err != nil {
		rollback(tx)
		return s.db.Unavailable(ctx, "lapse leases: write clock", err)
	}
	return s.commitTx(ctx, tx)
}

// commitTx commits tx, whose outcome is unknown when COMMIT fails: the
// error is then *hoststore.IndeterminateError, whatever ended it. A call
// whose context ended (or whose handle died) before COMMIT is rolled back.
func (s *Store) commitTx(ctx context.Context, tx *sql.Tx) error {
	if ctx.Err() != nil || s.db.Done() {
		rollback(tx)
		return s.db.Unavailable(ctx, "commit", context.Canceled)
	}
	if err := tx.Commit(); err != nil {
		return indeterminate("commit", err)
	}
	return nil
}
