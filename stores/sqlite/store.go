package sqlite

import (
	"database/sql"
	"fmt"
	"io"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/internal/sqlitedb"
)

// Store is one handle ("process") over a realm: a read pool and a write
// pool of its own over the realm's file. It implements hoststore.HostStore,
// hoststore.Killer and io.Closer, and is safe for concurrent use.
type Store struct {
	f  *Factory
	db *sqlitedb.Handle // db.Write: one connection; BeginTx starts BEGIN IMMEDIATE
}

var (
	_ hoststore.HostStore = (*Store)(nil)
	_ hoststore.Killer    = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

// FenceTiming returns the timing the store declares and records leases with.
func (s *Store) FenceTiming() hoststore.FenceTiming { return s.f.FenceTiming() }

// Kill drops the handle as a dying process would: every call in flight is
// cancelled (SQLite interrupts its statement; an open transaction is rolled
// back and its connection discarded), and both pools are closed. Later
// calls return *hoststore.UnavailableError.
func (s *Store) Kill() { s.db.Kill() }

// Close closes the handle gracefully: calls in flight finish, and their
// connections close as they are released. Later calls return
// *hoststore.UnavailableError.
func (s *Store) Close() error { return s.db.Close() }

// indeterminate maps err, met while COMMIT ran, to the contract.
func indeterminate(what string, err error) error {
	return &hoststore.IndeterminateError{Detail: fmt.Sprintf("%s: %s", what, sqlitedb.Describe(err))}
}

// rollback ends a transaction that must not commit. A failed ROLLBACK is
// not an error of the call: database/sql discards the connection, and
// SQLite rolls back a transaction whose connection goes away.
func rollback(tx *sql.Tx) {
	_ = tx.Rollback()
}
