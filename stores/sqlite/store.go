package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"modernc.org/sqlite"

	"github.com/conform-spi/conform/hoststore"
)

// Store is one handle ("process") over a realm: a read pool and a write
// pool of its own over the realm's file. It implements hoststore.HostStore,
// hoststore.Killer and io.Closer, and is safe for concurrent use.
type Store struct {
	f      *Factory
	read   *sql.DB // plain (deferred) transactions and single statements
	write  *sql.DB // one connection; BeginTx starts BEGIN IMMEDIATE
	life   context.Context
	end    context.CancelFunc
	done   atomic.Bool // set by Kill or Close
	killed atomic.Bool // set by Kill
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

func openStore(ctx context.Context, f *Factory) (*Store, error) {
	read, err := sql.Open("sqlite", f.dsn(false))
	if err != nil {
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}
	}
	write, err := sql.Open("sqlite", f.dsn(true))
	if err != nil {
		return nil, errors.Join(&hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}, read.Close())
	}
	write.SetMaxOpenConns(1)
	read.SetMaxIdleConns(4)
	life, end := context.WithCancel(context.Background())
	s := &Store{f: f, read: read, write: write, life: life, end: end}
	if err := read.PingContext(ctx); err != nil {
		s.Kill()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}
	}
	return s, nil
}

// FenceTiming is the timing the store declares and records leases with.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.f.cfg.timing }

// Kill drops the handle as a dying process would: every call in flight is
// cancelled (SQLite interrupts its statement; an open transaction is rolled
// back and its connection discarded), and both pools are closed. Later
// calls answer *hoststore.UnavailableError.
func (s *Store) Kill() {
	s.killed.Store(true)
	s.done.Store(true)
	s.end()
	// Errors closing a killed handle's pools have no one to go to: the
	// process they stand for is dead.
	_ = s.read.Close()
	_ = s.write.Close()
}

// Close closes the handle gracefully: calls in flight finish, and their
// connections close as they are released. Later calls answer
// *hoststore.UnavailableError.
func (s *Store) Close() error {
	s.done.Store(true)
	err := errors.Join(s.read.Close(), s.write.Close())
	s.end()
	if err != nil {
		return fmt.Errorf("sqlite store: close: %w", err)
	}
	return nil
}

// op derives the context of one call: it ends when ctx ends or when the
// handle is killed.
func (s *Store) op(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	return c, func() { stop(); cancel() }
}

// gone answers the error of a call on a killed or closed handle, or nil.
func (s *Store) gone(what string) error {
	if s.done.Load() {
		return &hoststore.UnavailableError{Detail: what + ": the handle is closed or killed"}
	}
	return nil
}

// unavailable maps err, met before anything was applied, to the contract:
// the caller's ctx.Err() when it ended, else *hoststore.UnavailableError.
func (s *Store) unavailable(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if gerr := s.gone(what); gerr != nil {
		return gerr
	}
	return &hoststore.UnavailableError{Detail: fmt.Sprintf("%s: %s", what, describe(err))}
}

// indeterminate maps err, met while COMMIT ran, to the contract.
func indeterminate(what string, err error) error {
	return &hoststore.IndeterminateError{Detail: fmt.Sprintf("%s: %s", what, describe(err))}
}

// describe renders a driver error with its SQLite result code.
func describe(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (sqlite code %d)", se, se.Code())
	}
	return err.Error()
}

// rollback ends a transaction that must not commit. A failed ROLLBACK is
// not an error of the call: database/sql discards the connection, and
// SQLite rolls back a transaction whose connection goes away.
func rollback(tx *sql.Tx) {
	_ = tx.Rollback()
}
