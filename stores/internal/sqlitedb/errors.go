package sqlitedb

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/conform-spi/conform/hoststore"
)

// Describe renders a driver error with its SQLite result code.
func Describe(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (sqlite code %d)", se, se.Code())
	}
	return err.Error()
}

// Busy reports whether err is SQLite's "locked" error (SQLITE_BUSY or
// SQLITE_LOCKED, any extended code), given before the statement changed
// anything.
func Busy(err error) bool {
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

// NonNil returns b, or an empty slice for nil: a stored blob read back as
// NULL or empty is an empty head or row, never nil.
func NonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Batch is the argument check of a commit: a nil batch is wrong.
func Batch(b *hoststore.CommitBatch) error {
	if b == nil {
		return errors.New("no batch")
	}
	return nil
}

// Limit is the argument check of a page size: limit <= 0 is wrong.
func Limit(limit int) error {
	if limit <= 0 {
		return fmt.Errorf("limit %d is not positive", limit)
	}
	return nil
}

// Kind is the argument check of a scope kind: one that is not a kind is
// wrong.
func Kind(kind hoststore.ScopeKind) error {
	if !kind.Valid() {
		return fmt.Errorf("kind %d is not a kind", uint8(kind))
	}
	return nil
}

// Mode is the argument check of an acquire mode: Exclusive and Takeover
// only.
func Mode(mode hoststore.AcquireMode) error {
	if mode != hoststore.Exclusive && mode != hoststore.Takeover {
		return fmt.Errorf("unknown mode %s", mode)
	}
	return nil
}
