package appendonly

import (
	"context"
	"database/sql"
	"io"
	"math/rand/v2"
	"time"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// Store is one handle ("process") over a realm: a read pool and a write
// pool of its own over the realm's file. It implements hoststore.HostStore,
// hoststore.Killer and io.Closer, and is safe for concurrent use.
type Store struct {
	f  *Factory
	db *sqlitedb.Handle // db.Write: one connection, SQLite admits one writer at a time
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

// FenceTiming returns the timing the store declares and records leases
// with.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.f.FenceTiming() }

// Kill drops the handle as a dying process would: every call in flight is
// cancelled (SQLite interrupts its statement; an insert that has not run
// never runs) and both pools are closed. Later calls return
// *hoststore.UnavailableError.
func (s *Store) Kill() { s.db.Kill() }

// Close closes the handle gracefully. Later calls return
// *hoststore.UnavailableError.
func (s *Store) Close() error { return s.db.Close() }

// insertAttempts bounds the tries of one insert while SQLite reports busy.
const insertAttempts = 6

// insert runs one INSERT in its own autocommit statement on the write pool,
// retrying it with jittered backoff while SQLite reports busy. Its error
// is the last one met.
func (s *Store) insert(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var err error
	for attempt := range insertAttempts {
		var res sql.Result
		res, err = s.db.Write.ExecContext(ctx, query, args...)
		if err == nil || !sqlitedb.Busy(err) || attempt == insertAttempts-1 {
			return res, err
		}
		backoff := time.Duration(1+rand.IntN(1<<attempt)) * time.Millisecond
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	return nil, err
}
