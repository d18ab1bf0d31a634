package hoststore

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ConflictError: the store refused the batch at commit because Scope is at
// version Current (nil: it does not exist), not at the update's Previous.
// Nothing was applied.
type ConflictError struct {
	Scope   ScopeRef
	Current *ScopeVersion
}

func (e *ConflictError) Error() string {
	cur := "absent"
	if e.Current != nil {
		cur = "version " + strconv.FormatUint(uint64(*e.Current), 10)
	}
	return fmt.Sprintf("conflict: scope %s is %s", e.Scope, cur)
}

// FencedOutError: a token higher than the caller's exists. Nothing was applied.
type FencedOutError struct {
	Current FenceToken
}

func (e *FencedOutError) Error() string {
	return fmt.Sprintf("fenced out: token %d is current", e.Current)
}

// IndeterminateError: the outcome is unknown; the batch may or may not have landed.
type IndeterminateError struct {
	Detail string
}

func (e *IndeterminateError) Error() string { return "indeterminate: " + e.Detail }

// InvalidError: the request breaks a limit or is malformed. Nothing was applied.
type InvalidError struct {
	Detail string
}

func (e *InvalidError) Error() string { return "invalid: " + e.Detail }

// UnavailableError: the store cannot be reached or cannot serve now. Nothing
// was applied.
type UnavailableError struct {
	Detail string
}

func (e *UnavailableError) Error() string { return "unavailable: " + e.Detail }

// HeldError: an exclusive acquire found a live holder whose recorded lease
// lasts Remaining longer. Nothing was acquired.
type HeldError struct {
	Holder    FenceToken
	Remaining time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("held: token %d holds the fence for %s more", e.Holder, e.Remaining)
}

// ErrorKind names which of the six contract errors an error is, or that it
// is none of them (see KindOf).
type ErrorKind string

// The error kinds: one per contract error type, and three more.
// ErrKindNone is a nil error; ErrKindContext is the caller's context
// ending (context.Canceled or context.DeadlineExceeded); ErrKindOther is
// any other error outside the contract, a breach of it.
const (
	ErrKindNone          ErrorKind = ""
	ErrKindConflict      ErrorKind = "Conflict"
	ErrKindFencedOut     ErrorKind = "FencedOut"
	ErrKindIndeterminate ErrorKind = "Indeterminate"
	ErrKindInvalid       ErrorKind = "Invalid"
	ErrKindUnavailable   ErrorKind = "Unavailable"
	ErrKindHeld          ErrorKind = "Held"
	ErrKindContext       ErrorKind = "Context"
	ErrKindOther         ErrorKind = "Other"
)

// KindOf returns the kind of err, classified with errors.As and errors.Is
// in the order of the constants above.
func KindOf(err error) ErrorKind {
	if err == nil {
		return ErrKindNone
	}
	var (
		c *ConflictError
		f *FencedOutError
		i *IndeterminateError
		v *InvalidError
		u *UnavailableError
		h *HeldError
	)
	switch {
	case errors.As(err, &c):
		return ErrKindConflict
	case errors.As(err, &f):
		return ErrKindFencedOut
	case errors.As(err, &i):
		return ErrKindIndeterminate
	case errors.As(err, &v):
		return ErrKindInvalid
	case errors.As(err, &u):
		return ErrKindUnavailable
	case errors.As(err, &h):
		return ErrKindHeld
	case errors.Is(err, errContextCanceled) || errors.Is(err, errDeadlineExceeded):
		return ErrKindContext
	}
	return ErrKindOther
}
