package writer

import (
	"errors"
	"fmt"
)

// ErrStopped is wrapped by every error a writer returns once the realm
// stopped: while this writer was fenced, another process acquired the fence
// or wrote to the realm. Only a new Open goes on
// (docs/host-store-contract.md#writer-rules).
var ErrStopped = errors.New("writer: the realm stopped; open it again")

// ErrSelfFenced is wrapped by the error a check or a write returns when the
// writer has fenced itself: a renew failed, or its self-fence window
// closed, so it neither writes nor starts calls. Refence, or the next
// write, makes the fresh acquire that goes on.
var ErrSelfFenced = errors.New("writer: self-fenced; a fresh acquire must come first")

// ErrRoundRefused is wrapped by a round's commit after one of its checks
// refused a call: the refused call never started, and nothing the round
// produced is committed.
var ErrRoundRefused = errors.New("writer: a check of this round refused a call; nothing of the round is committed")

// ErrClosed is returned by a writer after Close.
var ErrClosed = errors.New("writer: closed")

// SizeError is the typed size error of a change that cannot be written
// within the limits, even with its large values in chunks, or that the
// store refused with *hoststore.InvalidError. A value is stored whole or
// not at all, and so is a change: nothing of it is visible after this
// error (docs/host-store-contract.md#limits).
type SizeError struct {
	// Detail says which limit the change breaks.
	Detail string
	// Bytes is the size that broke it, Limit the limit (both zero when the
	// store refused the batch).
	Bytes, Limit int
	// Cause is the store's Invalid answer, when the store refused.
	Cause error
}

// Error says which limit the change breaks.
func (e *SizeError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("writer: size: %s: %v", e.Detail, e.Cause)
	}
	return fmt.Sprintf("writer: size: %s (%d bytes, limit %d)", e.Detail, e.Bytes, e.Limit)
}

// Unwrap returns the store's Invalid answer, if the store refused.
func (e *SizeError) Unwrap() error { return e.Cause }

// FormatError is returned when a head the writer reads was not written by
// a writer, or a chunked value does not match its digest or length.
type FormatError struct {
	Detail string
}

// Error says what does not match.
func (e *FormatError) Error() string { return "writer: format: " + e.Detail }

// stopped wraps why the realm stopped.
func stopped(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrStopped, fmt.Sprintf(format, args...))
}
