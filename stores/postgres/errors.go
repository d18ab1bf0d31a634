package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/conform-spi/conform/hoststore"
)

// SQLSTATEs the store reacts to.
const (
	codeUniqueViolation      = "23505"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeDivisionByZero       = "22012" // the commit's fence check failing; see sqlFenceCheck
)

// isContract reports whether err already is one of the six contract errors.
func isContract(err error) bool {
	switch hoststore.KindOf(err) {
	case hoststore.ErrKindConflict, hoststore.ErrKindFencedOut, hoststore.ErrKindIndeterminate,
		hoststore.ErrKindInvalid, hoststore.ErrKindUnavailable, hoststore.ErrKindHeld:
		return true
	}
	return false
}

// mapErr maps an error of a call that applied nothing: a contract error
// stands; the caller's context having ended returns ctx.Err(); anything else
// (a server error, a broken or killed connection) is *UnavailableError.
func mapErr(ctx context.Context, op string, err error) error {
	if err == nil || isContract(err) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return &hoststore.UnavailableError{Detail: fmt.Sprintf("postgres %s: %v", op, err)}
}

// unknown maps an error met after a request that may have changed the
// realm (a COMMIT, an autocommit UPDATE) was sent: the server may have
// applied it, so the outcome is *IndeterminateError, also when the caller's
// context ended meanwhile. A server error reply means the server refused
// the request, so nothing was applied.
func unknown(ctx context.Context, op string, err error) error {
	if isContract(err) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return mapErr(ctx, op, err)
	}
	return &hoststore.IndeterminateError{Detail: fmt.Sprintf("postgres %s: the outcome is unknown: %v", op, err)}
}

// sqlState returns err's SQLSTATE, or "" when the server sent none.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryable reports a server error after which nothing was applied and the
// same transaction may simply run again: a deadlock, a serialization
// failure, or a unique violation from a concurrent create or a concurrent
// send of the same commit id (the rerun sees the winner's rows).
func retryable(err error) bool {
	switch sqlState(err) {
	case codeDeadlockDetected, codeSerializationFailure, codeUniqueViolation:
		return true
	}
	return false
}
