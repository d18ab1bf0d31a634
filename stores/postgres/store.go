package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Store is one handle ("process") over a realm. It implements
// hoststore.HostStore, hoststore.Killer and io.Closer, and is safe for
// concurrent use: each call takes a connection of the handle's own pool.
type Store struct {
	f    *Factory
	pool *pool
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

// Realm returns the realm id the handle serves.
func (s *Store) Realm() string { return s.f.realm }

// FenceTiming returns the timing the store declares and records leases
// with: its factory's (hoststore.DefaultFenceTiming unless configured).
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.f.timing }

// Kill drops every connection of the handle at once, idle or in use, by
// closing its socket: no Terminate, COMMIT or ROLLBACK is sent, so the
// server aborts any transaction the handle had open. Every later call, and
// every call in flight at its next step, fails: before a commit's COMMIT
// was sent with *hoststore.UnavailableError (nothing applied), after it
// with *hoststore.IndeterminateError.
func (s *Store) Kill() {
	s.f.stores.Remove(s)
	s.pool.kill()
}

// Close closes the handle: idle connections are closed now, gracefully;
// a busy one is closed when its call ends (its transaction is over by
// then). Later calls return *hoststore.UnavailableError. Close after Kill
// does nothing.
func (s *Store) Close() error {
	s.f.stores.Remove(s)
	return s.pool.close()
}

// get takes a connection, mapping pool errors to the contract's.
func (s *Store) get(ctx context.Context, op string) (*conn, error) {
	c, err := s.pool.get(ctx)
	if err != nil {
		if errors.Is(err, errKilled) || errors.Is(err, errClosed) {
			return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("postgres %s: %v", op, err)}
		}
		return nil, mapErr(ctx, op+": connect", err)
	}
	return c, nil
}

// release gives c back to the pool after ending any transaction left open
// on it (an error path): ROLLBACK is sent with a short deadline of its own;
// a connection that cannot roll back is dropped, which aborts the
// transaction server-side just as well.
func (s *Store) release(ctx context.Context, c *conn) {
	if !c.IsClosed() && !c.killed.Load() && c.PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := c.Exec(rctx, "ROLLBACK"); err != nil {
			s.pool.drop(c)
			return
		}
	}
	s.pool.put(c)
}

// checkScope refuses a malformed scope reference as *InvalidError.
func checkScope(op string, ref hoststore.ScopeRef) error {
	if err := ref.Validate(); err != nil {
		return &hoststore.InvalidError{Detail: op + ": " + err.Error()}
	}
	return nil
}

// clampIndex maps a row index onto bigint: indices past the largest bigint
// behave as the largest one (no row ever gets there).
func clampIndex(i hoststore.RowIndex) int64 {
	const maxInt64 = 1<<63 - 1
	if i > maxInt64 {
		return maxInt64
	}
	return int64(i)
}

// clampLimit bounds a positive limit so that limit+1 fits an int64 query
// parameter.
func clampLimit(limit int) int64 {
	const maxLimit = 1 << 40
	if limit > maxLimit {
		return maxLimit
	}
	return int64(limit)
}
