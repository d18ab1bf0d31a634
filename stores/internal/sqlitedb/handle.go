package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/conform-spi/conform/hoststore"
)

// Handle is one process's pools over a File: a read pool, and a write pool
// of one connection. Within one handle, writers queue in Go for that
// connection: SQLite admits one writer at a time anyway, and queueing is
// much cheaper than letting them spin in SQLite's busy handler; writers of
// different handles meet at SQLite's lock under busy_timeout. A Handle is
// safe for concurrent use.
type Handle struct {
	// Read is the read pool: plain (deferred) transactions and single
	// statements.
	Read *sql.DB
	// Write is the write pool, of one connection; its BeginTx starts
	// BEGIN IMMEDIATE when the Flavor is Transactional.
	Write *sql.DB

	file   *File
	name   string // the Flavor's Name
	life   context.Context
	end    context.CancelFunc
	done   atomic.Bool // set by Kill or Close
	killed atomic.Bool // set by Kill
}

// Open opens a new Handle over the file: new pools that share nothing with
// earlier handles. It returns *hoststore.UnavailableError when the file
// cannot be opened or f is closed, or ctx.Err().
func (f *File) Open(ctx context.Context) (*Handle, error) {
	read, err := sql.Open("sqlite", f.dsn(false))
	if err != nil {
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}
	}
	write, err := sql.Open("sqlite", f.dsn(f.flavor.Transactional))
	if err != nil {
		return nil, errors.Join(&hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}, read.Close())
	}
	write.SetMaxOpenConns(1)
	read.SetMaxIdleConns(4)
	life, end := context.WithCancel(context.Background())
	h := &Handle{Read: read, Write: write, file: f, name: f.flavor.Name, life: life, end: end}
	if !f.handles.Add(h) {
		h.Kill()
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: the realm is closed", f.path)}
	}
	if err := read.PingContext(ctx); err != nil {
		h.Kill()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &hoststore.UnavailableError{Detail: fmt.Sprintf("open %q: %v", f.path, err)}
	}
	return h, nil
}

// Kill drops the handle as a dying process would: every call in flight is
// cancelled (SQLite interrupts its statement; an open transaction is rolled
// back and its connection discarded), and both pools are closed.
func (h *Handle) Kill() {
	h.file.handles.Remove(h)
	h.killed.Store(true)
	h.done.Store(true)
	h.end()
	// Errors closing a killed handle's pools have no one to go to: the
	// process they stand for is dead.
	_ = h.Read.Close()
	_ = h.Write.Close()
}

// Close closes the handle gracefully: calls in flight finish, and their
// connections close as they are released.
func (h *Handle) Close() error {
	h.file.handles.Remove(h)
	h.done.Store(true)
	err := errors.Join(h.Read.Close(), h.Write.Close())
	h.end()
	if err != nil {
		return fmt.Errorf("%s: close: %w", h.name, err)
	}
	return nil
}

// Done reports whether the handle was killed or closed.
func (h *Handle) Done() bool { return h.done.Load() }

// Killed reports whether the handle was killed.
func (h *Handle) Killed() bool { return h.killed.Load() }

// Op derives the context of one call: it ends when ctx ends or when the
// handle is killed. The call runs the func it returns when it ends.
func (h *Handle) Op(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.life, cancel)
	return c, func() { stop(); cancel() }
}

// Gone returns the error of a call named what on a killed or closed
// handle, *hoststore.UnavailableError, or nil.
func (h *Handle) Gone(what string) error {
	if h.done.Load() {
		return &hoststore.UnavailableError{Detail: what + ": the handle is closed or killed"}
	}
	return nil
}

// Call starts the call named what: it returns the first non-nil of args
// (the call's argument checks, in order: hoststore.ScopeRef.Validate,
// Batch, Limit, Kind, Mode) as
// *hoststore.InvalidError "what: …", else Gone(what), else the call's
// context (from Op) and its end.
func (h *Handle) Call(ctx context.Context, what string, args ...error) (context.Context, func(), error) {
	for _, err := range args {
		if err != nil {
			return nil, nil, &hoststore.InvalidError{Detail: what + ": " + err.Error()}
		}
	}
	if err := h.Gone(what); err != nil {
		return nil, nil, err
	}
	c, done := h.Op(ctx)
	return c, done, nil
}

// Unavailable maps err, met before anything was applied (or, in a store
// without transactions, before anything visible was written), to the
// contract: the caller's ctx.Err() when it ended, else Gone's error, else
// *hoststore.UnavailableError "what: err".
func (h *Handle) Unavailable(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if gerr := h.Gone(what); gerr != nil {
		return gerr
	}
	return &hoststore.UnavailableError{Detail: fmt.Sprintf("%s: %s", what, Describe(err))}
}

// CloseAfter closes the handle once a call that returned err is over, and
// returns err; when only the close failed, *hoststore.UnavailableError
// "what: close: …".
func (h *Handle) CloseAfter(err error, what string) error {
	if cerr := h.Close(); err == nil && cerr != nil {
		err = &hoststore.UnavailableError{Detail: what + ": close: " + cerr.Error()}
	}
	return err
}
