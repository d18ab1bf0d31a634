package instore_test

import (
	"context"
	"database/sql"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/instore"
)

// rowLockStore keeps its realm in a database with row locks and many
// concurrent writers, such as PostgreSQL. A commit there locks only the rows
// of its own scopes, so it may wait at every site inside its transaction.
type rowLockStore struct{ db *sql.DB }

func (s *rowLockStore) Commit(ctx context.Context, batch *hoststore.CommitBatch) error {
	id := batch.CommitID()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return &hoststore.UnavailableError{Detail: err.Error()}
	}
	defer tx.Rollback() // ends the transaction unapplied unless it committed
	if err := lockScopes(ctx, tx, batch); err != nil {
		return err
	}
	if err := instore.At(ctx, instore.CommitLocked, id); err != nil {
		return err // return at once: nothing is applied
	}
	if err := checkAndWrite(ctx, tx, batch); err != nil {
		return err
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, id); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil { // the commit point
		return &hoststore.IndeterminateError{Detail: err.Error()}
	}
	return instore.At(ctx, instore.CommitAfterPoint, id) // an error now loses only the answer
}

// singleWriterStore keeps its realm in an engine with one write lock for the
// whole database, such as SQLite or bbolt. A write transaction open at a site
// would stall every other writer, so no site is inside one.
type singleWriterStore struct{ db *sql.DB }

func (s *singleWriterStore) Commit(ctx context.Context, batch *hoststore.CommitBatch) error {
	id := batch.CommitID()
	if err := instore.At(ctx, instore.CommitLocked, id); err != nil { // no lock held yet
		return err
	}
	if err := precheck(ctx, s.db, batch); err != nil { // a read-only snapshot: refuse early
		return err
	}
	if err := instore.At(ctx, instore.CommitBeforePoint, id); err != nil { // before the write lock
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE takes the write lock
	if err != nil {
		return &hoststore.UnavailableError{Detail: err.Error()}
	}
	defer tx.Rollback()
	if err := checkAndWrite(ctx, tx, batch); err != nil { // checks again: the precheck may be stale
		return err
	}
	if err := tx.Commit(); err != nil { // the commit point; the write lock goes with it
		return &hoststore.IndeterminateError{Detail: err.Error()}
	}
	return instore.At(ctx, instore.CommitAfterPoint, id) // the write lock is released
}

// The store's own statements, left out here.
var (
	// lockScopes locks the rows of the batch's scopes (SELECT ... FOR
	// UPDATE), in one fixed order.
	lockScopes func(context.Context, *sql.Tx, *hoststore.CommitBatch) error
	// precheck checks the commit id, the token and the versions in a
	// read-only transaction.
	precheck func(context.Context, *sql.DB, *hoststore.CommitBatch) error
	// checkAndWrite checks the commit id, the token and the versions, and
	// writes the batch and its commit record.
	checkAndWrite func(context.Context, *sql.Tx, *hoststore.CommitBatch) error
)

// Example shows where a store calls At: the two Commit methods above pass
// the same three sites and differ in what they hold there.
func Example() {
	var db *sql.DB // opened by the store
	_ = &rowLockStore{db: db}
	_ = &singleWriterStore{db: db}
}
