package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// pool is a handle's own small connection pool over pgx.Conn. It exists,
// instead of pgxpool, for two reasons: pgxpool's puddle dependency is not in
// this module's go.mod, and Kill must cut every connection, idle or busy,
// without a graceful step, which pgxpool offers no way to do for busy ones.
type pool struct {
	cfg *pgx.ConnConfig
	sem chan struct{} // one token per connection that may exist

	mu     sync.Mutex
	idle   []*conn
	all    map[*conn]struct{}
	killed bool
	closed bool
}

// conn is one pooled connection. killed is set by Kill before it closes the
// socket, so a commit that sees it unset before sending its last batch knows
// that a failure afterwards may have reached the server.
type conn struct {
	*pgx.Conn
	killed atomic.Bool
}

// errKilled and errClosed are answered by get after Kill and Close; callers
// map them to *hoststore.UnavailableError.
var (
	errKilled = errors.New("the handle was killed")
	errClosed = errors.New("the handle is closed")
)

func newPool(cfg *pgx.ConnConfig, maxConns int) *pool {
	return &pool{cfg: cfg, sem: make(chan struct{}, maxConns), all: map[*conn]struct{}{}}
}

// get returns an idle connection or dials a new one, waiting while maxConns
// are in use. The caller gives it back with put.
func (p *pool) get(ctx context.Context) (*conn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if err := p.stateErr(); err != nil {
		p.mu.Unlock()
		<-p.sem
		return nil, err
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	pc, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.sem
		return nil, err
	}
	c := &conn{Conn: pc}
	p.mu.Lock()
	if err := p.stateErr(); err != nil {
		p.mu.Unlock()
		abort(c)
		<-p.sem
		return nil, err
	}
	p.all[c] = struct{}{}
	p.mu.Unlock()
	return c, nil
}

func (p *pool) stateErr() error {
	switch {
	case p.killed:
		return errKilled
	case p.closed:
		return errClosed
	}
	return nil
}

// put gives c back. A connection that is closed, killed, or not idle on the
// server (inside a transaction the caller could not end) is dropped: its
// socket is closed, and the server aborts whatever it had open.
func (p *pool) put(c *conn) {
	defer func() { <-p.sem }()
	reuse := !c.IsClosed() && !c.killed.Load() && c.PgConn().TxStatus() == 'I'
	p.mu.Lock()
	if reuse && p.stateErr() == nil {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		return
	}
	delete(p.all, c)
	p.mu.Unlock()
	abort(c)
}

// drop closes c's socket at once and forgets it: the "process" died on it.
func (p *pool) drop(c *conn) {
	p.mu.Lock()
	delete(p.all, c)
	p.mu.Unlock()
	abort(c)
	<-p.sem
}

// abort closes c's socket without sending Terminate, COMMIT or ROLLBACK. The
// error of closing a socket that is being torn down says nothing useful.
func abort(c *conn) {
	c.killed.Store(true)
	_ = c.PgConn().Conn().Close()
}

// kill cuts every connection, idle or busy, without a graceful step, and
// makes later gets fail. Operations in flight fail on their next read or
// write; the server aborts their open transactions.
func (p *pool) kill() {
	p.mu.Lock()
	p.killed = true
	conns := make([]*conn, 0, len(p.all))
	for c := range p.all {
		conns = append(conns, c)
	}
	p.all = map[*conn]struct{}{}
	p.idle = nil
	p.mu.Unlock()
	for _, c := range conns {
		abort(c)
	}
}

// close closes the idle connections gracefully and makes later gets fail;
// connections in use are closed when they are put back.
func (p *pool) close() error {
	p.mu.Lock()
	if p.killed || p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	for _, c := range idle {
		delete(p.all, c)
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, c := range idle {
		if err := c.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
