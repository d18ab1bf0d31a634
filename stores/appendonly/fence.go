package appendonly

import (
	"context"
	"fmt"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// nextSeq is the seq of the next marker or fence row: one order over both
// tables, computed inside the inserting statement (see the package doc).
const nextSeq = `(SELECT MAX(COALESCE((SELECT MAX(seq) FROM markers), 0), COALESCE((SELECT MAX(seq) FROM fences), 0)) + 1)`

// clockOffset is the realm's clock offset: the largest recorded.
const clockOffset = `(SELECT COALESCE(MAX(offset_ns), 0) FROM clock)`

// wallNow is the wall clock in ns as the inserting statement reads it,
// under SQLite's write lock (a statement retried after SQLITE_BUSY reads
// it again), so a fence row's clock follows the rows' order: no row ordered
// before it read a later clock, up to SQLite's millisecond. SQLite keeps
// milliseconds; one is taken off so that it never runs ahead of a time.Now
// read afterwards (holder). A clock read before the statement would be
// stale by however long the statement waited for the lock: a takeover
// that landed after another acquire, or after a lapse, would then report a
// lease left that no order of the two explains.
const wallNow = `((CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER) - 1) * 1000000)`

// acquireSQL appends the next token's acquire row, with its lease from now
// (?1 is the lease, ns), unless ?2 is 0 (Exclusive) and the holder of the
// highest token has a live lease.
const acquireSQL = `INSERT INTO fences (seq, token, kind, lease_expiry)
SELECT ` + nextSeq + `, t.top + 1, 'acquire', c.now + ?1
FROM (SELECT COALESCE(MAX(token), 0) AS top FROM fences) AS t, (SELECT ` + wallNow + ` + ` + clockOffset + ` AS now) AS c
WHERE ?2 <> 0 OR COALESCE((SELECT MAX(lease_expiry) FROM fences WHERE token = t.top), 0) <= c.now`

// renewSQL appends a lease row for token ?1 from now (?2 the lease, ns),
// only if ?1 is the highest token.
const renewSQL = `INSERT INTO fences (seq, token, kind, lease_expiry)
SELECT ` + nextSeq + `, ?1, 'renew', ` + wallNow + ` + ` + clockOffset + ` + ?2
WHERE ?1 = (SELECT MAX(token) FROM fences)`

// lapseSQL appends a clock row that puts now just past (?1 ns) the latest
// recorded lease, if that lease has not lapsed yet.
const lapseSQL = `INSERT INTO clock (offset_ns)
SELECT f.top - ` + wallNow + ` + ?1 FROM (SELECT COALESCE(MAX(lease_expiry), 0) AS top FROM fences) AS f
WHERE f.top >= ` + wallNow + ` + ` + clockOffset

// holder reads the highest token, its latest lease and now on the realm's
// clock.
func (s *Store) holder(ctx context.Context) (tok hoststore.FenceToken, expiry, now int64, err error) {
	var top, off int64
	err = s.db.Read.QueryRowContext(ctx,
		`SELECT t.top, COALESCE((SELECT MAX(lease_expiry) FROM fences WHERE token = t.top), 0), `+clockOffset+`
		FROM (SELECT COALESCE(MAX(token), 0) AS top FROM fences) AS t`,
	).Scan(&top, &expiry, &off)
	return hoststore.FenceToken(top), expiry, time.Now().UnixNano() + off, err
}

// acquireAttempts bounds how often an exclusive acquire tries again when
// the holder it was refused for lapsed meanwhile.
const acquireAttempts = 3

// AcquireFence appends an acquire row with the next token, in one
// conditional INSERT, and reads it back. With Exclusive it returns
// *hoststore.HeldError while another lease is live; with Takeover it always
// issues a token and returns what was left of a live holder's lease.
func (s *Store) AcquireFence(ctx context.Context, mode hoststore.AcquireMode) (hoststore.FenceGrant, error) {
	octx, done, err := s.db.Call(ctx, "acquire", sqlitedb.Mode(mode))
	if err != nil {
		return hoststore.FenceGrant{}, err
	}
	defer done()
	takeover := 0
	if mode == hoststore.Takeover {
		takeover = 1
	}
	lease := int64(s.f.FenceTiming().Lease())
	for range acquireAttempts {
		res, err := s.insert(octx, acquireSQL, lease, takeover)
		if err != nil {
			return hoststore.FenceGrant{}, s.indeterminateOr(ctx, "acquire", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return hoststore.FenceGrant{}, &hoststore.IndeterminateError{Detail: "acquire: " + sqlitedb.Describe(err)}
		}
		if n == 1 {
			seq, err := res.LastInsertId()
			if err != nil {
				return hoststore.FenceGrant{}, &hoststore.IndeterminateError{Detail: "acquire: " + sqlitedb.Describe(err)}
			}
			return s.granted(ctx, octx, seq, lease)
		}
		tok, expiry, now, err := s.holder(octx)
		if err != nil {
			return hoststore.FenceGrant{}, s.db.Unavailable(ctx, "acquire: read holder", err)
		}
		if expiry > now {
			return hoststore.FenceGrant{}, &hoststore.HeldError{Holder: tok, Remaining: time.Duration(expiry - now)}
		}
	}
	return hoststore.FenceGrant{}, &hoststore.UnavailableError{Detail: "acquire: the holder's lease kept changing; try again"}
}

// granted reads back the acquire row at seq, and the rows ordered before
// it, to build the grant: the new token and what remained of the lease of
// the holder it superseded.
func (s *Store) granted(ctx, octx context.Context, seq, lease int64) (hoststore.FenceGrant, error) {
	var tok, expiry, prevTok, prevExpiry int64
	err := s.db.Read.QueryRowContext(octx,
		`SELECT f.token, f.lease_expiry, p.top,
			COALESCE((SELECT MAX(lease_expiry) FROM fences WHERE token = p.top AND seq < ?1), 0)
		FROM fences AS f, (SELECT COALESCE(MAX(token), 0) AS top FROM fences WHERE seq < ?1) AS p
		WHERE f.seq = ?1`, seq,
	).Scan(&tok, &expiry, &prevTok, &prevExpiry)
	if err != nil {
		// The token is acquired, but unknown to the caller.
		if ctx.Err() != nil {
			return hoststore.FenceGrant{}, ctx.Err()
		}
		return hoststore.FenceGrant{}, &hoststore.IndeterminateError{Detail: "acquire: read back: " + sqlitedb.Describe(err)}
	}
	now := expiry - lease
	g := hoststore.FenceGrant{Token: hoststore.FenceToken(tok)}
	if prevTok > 0 && prevExpiry > now {
		// wallNow keeps milliseconds, so a row ordered just before this
		// one may hold a clock up to a millisecond later; the acquire
		// landed after it, so at most a whole lease was left.
		g.SupersededLease = time.Duration(min(prevExpiry-now, lease))
	}
	return g, nil
}

// RenewFence appends a lease row for token from now, in one INSERT that
// lands only while token is the highest, also after its lease ran out. A
// token never issued (0 or above the highest) returns
// *hoststore.InvalidError; a superseded one *hoststore.FencedOutError.
func (s *Store) RenewFence(ctx context.Context, token hoststore.FenceToken) error {
	octx, done, err := s.db.Call(ctx, "renew")
	if err != nil {
		return err
	}
	defer done()
	if token > 1<<63-1 {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("renew: token %d was never issued", token)}
	}
	res, err := s.insert(octx, renewSQL, int64(token), int64(s.f.FenceTiming().Lease()))
	if err != nil {
		return s.indeterminateOr(ctx, "renew", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		if err != nil {
			return &hoststore.IndeterminateError{Detail: "renew: " + sqlitedb.Describe(err)}
		}
		return nil
	}
	top, _, _, err := s.holder(octx)
	if err != nil {
		return s.db.Unavailable(ctx, "renew: read holder", err)
	}
	if token == 0 || token > top {
		return &hoststore.InvalidError{Detail: fmt.Sprintf("renew: token %d was never issued (highest is %d)", token, top)}
	}
	return &hoststore.FencedOutError{Current: top}
}

// lapseMargin is how far past the latest lease a lapse puts now: enough
// for the millisecond SQLite's clock may differ by between two statements.
const lapseMargin = 5 * time.Millisecond

// lapse appends a clock row that ends every recorded lease.
func (s *Store) lapse(ctx context.Context) error {
	octx, done := s.db.Op(ctx)
	defer done()
	if _, err := s.insert(octx, lapseSQL, int64(lapseMargin)); err != nil {
		return s.db.Unavailable(ctx, "lapse leases", err)
	}
	return nil
}

// indeterminateOr maps the failure of a single insert: busy (it never ran)
// and a handle killed before it is Unavailable, the caller's context ended
// is ctx.Err(), anything else Indeterminate (the statement may have landed).
func (s *Store) indeterminateOr(ctx context.Context, what string, err error) error {
	if sqlitedb.Busy(err) {
		return s.db.Unavailable(ctx, what, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if s.db.Done() {
		return &hoststore.IndeterminateError{Detail: what + ": the handle was killed or closed during the insert"}
	}
	return &hoststore.IndeterminateError{Detail: fmt.Sprintf("%s: %s", what, sqlitedb.Describe(err))}
}
