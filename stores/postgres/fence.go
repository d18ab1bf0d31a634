package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
)

// The realm's "now" for leases is the database clock plus the realm's clock
// offset (conform_realms.clock_offset), which only LapseFenceLeases moves.

// sqlFenceRead reads the fence under its row lock, with what remains of the
// recorded lease in microseconds (NULL without a lease).
const sqlFenceRead = `SELECT f.token,
		(EXTRACT(EPOCH FROM (f.lease_until - (clock_timestamp() + r.clock_offset))) * 1000000)::bigint
	FROM conform_fences f JOIN conform_realms r ON r.realm = f.realm
	WHERE f.realm = $1 FOR UPDATE OF f`

// sqlFenceIssue issues the next token and records its lease from now.
const sqlFenceIssue = `UPDATE conform_fences f
	SET token = f.token + 1,
		lease_until = clock_timestamp() + r.clock_offset + $2::bigint * interval '1 microsecond'
	FROM conform_realms r WHERE f.realm = $1 AND r.realm = $1
	RETURNING f.token`

// sqlFenceRenew records a new lease from now for the holder of token $2,
// when $2 still is the highest token.
const sqlFenceRenew = `UPDATE conform_fences f
	SET lease_until = clock_timestamp() + r.clock_offset + $3::bigint * interval '1 microsecond'
	FROM conform_realms r WHERE f.realm = $1 AND r.realm = $1 AND f.token = $2`

const sqlFenceToken = `SELECT token FROM conform_fences WHERE realm = $1`

// sqlLapse moves the realm's clock just past the recorded lease's expiry,
// never back.
const sqlLapse = `UPDATE conform_realms r
	SET clock_offset = GREATEST(r.clock_offset, f.lease_until - clock_timestamp() + interval '1 millisecond')
	FROM conform_fences f
	WHERE r.realm = $1 AND f.realm = $1 AND f.lease_until IS NOT NULL`

// AcquireFence issues the realm's next token and starts its holder's lease, in
// one transaction that commits, durably, before it returns. It first takes the
// realm's fence lock exclusively (see the package doc): it waits only for
// commits that are past their last step's start, never for a commit held in
// flight. With Exclusive it returns *HeldError while another lease is live;
// with Takeover it always issues a token and returns what was left of a live
// holder's lease, or zero. A mode that is neither returns *InvalidError. When
// the answer to COMMIT is lost it returns *IndeterminateError.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	if mode != hoststore.Exclusive && mode != hoststore.Takeover {
		return hoststore.FenceGrant{}, &hoststore.InvalidError{Detail: fmt.Sprintf("AcquireFence mode %d is not a mode", uint8(mode))}
	}
	c, err := s.get(ctx, "AcquireFence")
	if err != nil {
		return hoststore.FenceGrant{}, err
	}
	defer s.release(ctx, c)
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SELECT pg_advisory_xact_lock($1)", s.f.lockKey)
	b.Queue(sqlFenceRead, s.f.realm)
	var (
		token  int64
		remain *int64
	)
	err = runBatch(ctx, c, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		return br.QueryRow().Scan(&token, &remain)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return hoststore.FenceGrant{}, &hoststore.UnavailableError{Detail: fmt.Sprintf("postgres AcquireFence: realm %q has no fence row (dropped?)", s.f.realm)}
	}
	if err != nil {
		return hoststore.FenceGrant{}, mapErr(ctx, "AcquireFence", err)
	}
	var live time.Duration
	if token > 0 && remain != nil && *remain > 0 {
		live = time.Duration(*remain) * time.Microsecond
	}
	if mode == hoststore.Exclusive && live > 0 {
		return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: hoststore.FenceToken(token), Remaining: live}
	}
	b = &pgx.Batch{}
	b.Queue(sqlFenceIssue, s.f.realm, s.f.timing.Lease().Microseconds())
	b.Queue("COMMIT")
	var issued int64
	err = runBatch(ctx, c, b, func(br pgx.BatchResults) error {
		if err := br.QueryRow().Scan(&issued); err != nil {
			return err
		}
		_, err := br.Exec()
		return err
	})
	if err != nil {
		return hoststore.FenceGrant{}, unknown(ctx, "AcquireFence", err)
	}
	return hoststore.FenceGrant{Token: hoststore.FenceToken(issued), SupersededLease: live}, nil
}

// RenewFence starts a fresh lease now for the holder of token while token
// is the highest, also after its lease ran out. A superseded token returns
// *FencedOutError{Current}; a token never issued (0 or above the highest)
// *InvalidError. Its transaction takes the realm's fence lock in shared mode,
// as a commit does, before it updates the fence row in a later statement: it
// never waits for a commit held in flight, only for an acquire or a lapse in
// progress, and a lapse never lands between its reading of the realm's clock
// and its write (see the package doc). When the answer to its COMMIT is lost
// it returns *IndeterminateError.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	if token == 0 || token > 1<<63-1 {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("RenewFence with token %d, which was never issued", token)}
	}
	c, err := s.get(ctx, "RenewFence")
	if err != nil {
		return err
	}
	defer s.release(ctx, c)
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlFenceShared, s.f.lockKey)
	b.Queue(sqlFenceRenew, s.f.realm, int64(token), s.f.timing.Lease().Microseconds())
	b.Queue("COMMIT")
	var renewed int64
	err = runBatch(ctx, c, b, func(br pgx.BatchResults) error {
		if err := readN(2)(br); err != nil {
			return err
		}
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		renewed = tag.RowsAffected()
		_, err = br.Exec()
		return err
	})
	if err != nil {
		return unknown(ctx, "RenewFence", err)
	}
	if renewed == 1 {
		return nil
	}
	var cur int64
	if err := c.QueryRow(ctx, sqlFenceToken, s.f.realm).Scan(&cur); err != nil {
		return mapErr(ctx, "RenewFence", err)
	}
	if err := tokenErr("RenewFence", token, cur); err != nil {
		return err
	}
	return &hoststore.UnavailableError{Detail: fmt.Sprintf("postgres RenewFence: realm %q recorded no lease (dropped?)", s.f.realm)}
}

// tokenErr returns the error for a token that is not the highest: a
// superseded token *FencedOutError, one never issued *InvalidError; nil
// for the highest.
func tokenErr(op string, token hoststore.FenceToken, highest int64) error {
	switch cur := hoststore.FenceToken(highest); {
	case token == 0 || token > cur:
		return &hoststore.InvalidError{Detail: fmt.Sprintf("%s with token %d, which was never issued (highest %d)", op, token, cur)}
	case token < cur:
		return &hoststore.FencedOutError{Current: cur}
	}
	return nil
}

// runBatch sends b and reads its results with read, then closes them.
func runBatch(ctx context.Context, c *conn, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := c.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}
