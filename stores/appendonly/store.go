package appendonly

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/conform-spi/conform/hoststore"
)

// Store is one handle ("process") over a realm: a read pool and a write
// pool of its own over the realm's file. It implements hoststore.HostStore,
// hoststore.Killer and io.Closer, and is safe for concurrent use.
type Store struct {
	f      *Factory
	read   *sql.DB
	write  *sql.DB // one connection: SQLite admits one writer at a time
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
	read, err := sql.Open("sqlite", f.dsn())
	if err != nil {
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}
	}
	write, err := sql.Open("sqlite", f.dsn())
	if err != nil {
		return nil, errors.Join(&hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}, read.Close())
	}
	// Queueing the handle's writers in Go is far cheaper than letting them
	// spin in SQLite's busy handler; it adds no order SQLite does not
	// impose anyway.
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
// cancelled (SQLite interrupts its statement; an insert that has not run
// never runs) and both pools are closed. Later calls answer
// *hoststore.UnavailableError.
func (s *Store) Kill() {
	s.killed.Store(true)
	s.done.Store(true)
	s.end()
	// Errors closing a killed handle's pools have no one to go to: the
	// process they stand for is dead.
	_ = s.read.Close()
	_ = s.write.Close()
}

// Close closes the handle gracefully. Later calls answer
// *hoststore.UnavailableError.
func (s *Store) Close() error {
	s.done.Store(true)
	err := errors.Join(s.read.Close(), s.write.Close())
	s.end()
	if err != nil {
		return fmt.Errorf("append-only store: close: %w", err)
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

// unavailable maps err, met before anything visible was written, to the
// contract: the caller's ctx.Err() when it ended, else
// *hoststore.UnavailableError.
func (s *Store) unavailable(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if gerr := s.gone(what); gerr != nil {
		return gerr
	}
	return &hoststore.UnavailableError{Detail: fmt.Sprintf("%s: %s", what, describe(err))}
}

// describe renders a driver error with its SQLite result code.
func describe(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (sqlite code %d)", se, se.Code())
	}
	return err.Error()
}

// busy reports whether err is SQLite's "locked" answer, given before the
// statement changed anything.
func busy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// insertAttempts bounds the tries of one insert ("Retries" in the spec:
// one store needed up to six).
const insertAttempts = 6

// insert runs one INSERT in its own autocommit statement on the write pool,
// retrying it with jittered backoff while SQLite answers busy. Its error
// is the last one met.
func (s *Store) insert(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var err error
	for attempt := range insertAttempts {
		var res sql.Result
		res, err = s.write.ExecContext(ctx, query, args...)
		if err == nil || !busy(err) || attempt == insertAttempts-1 {
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

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
