package hoststore

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ConflictError is Commit's refusal of a batch whose update expected
// Previous while Scope stands at Current; a nil Current means the scope does
// not exist. Nothing was applied. Only a store that keeps one version chain
// per scope at commit returns it (docs/host-store-contract.md#ob-4).
type ConflictError struct {
	Scope   ScopeRef
	Current *ScopeVersion
}

// Error returns "conflict: scope Kind/"name" is version N", or "is absent".
func (e *ConflictError) Error() string {
	cur := "absent"
	if e.Current != nil {
		cur = "version " + strconv.FormatUint(uint64(*e.Current), 10)
	}
	return fmt.Sprintf("conflict: scope %s is %s", e.Scope, cur)
}

// FencedOutError reports that a token above the caller's has been issued;
// Current is the highest. RenewFence returns it, and so does Commit in a
// store that fences at commit (docs/host-store-contract.md#ob-5). Nothing
// was applied.
type FencedOutError struct {
	Current FenceToken
}

// Error returns "fenced out: token N is current".
func (e *FencedOutError) Error() string {
	return fmt.Sprintf("fenced out: token %d is current", e.Current)
}

// IndeterminateError reports that the store cannot tell whether a batch
// landed. The writer settles it by sending the same batch again or by
// loading the head (docs/host-store-contract.md#errors).
type IndeterminateError struct {
	Detail string
}

// Error returns "indeterminate: " and the detail.
func (e *IndeterminateError) Error() string { return "indeterminate: " + e.Detail }

// InvalidError reports a malformed request, or one over a limit. Nothing
// was applied.
type InvalidError struct {
	Detail string
}

// Error returns "invalid: " and the detail.
func (e *InvalidError) Error() string { return "invalid: " + e.Detail }

// UnavailableError reports a backend that is down, out of reach or refusing
// work for now. It promises that nothing was applied: when a commit may have
// landed, return *IndeterminateError instead
// (docs/host-store-contract.md#errors).
type UnavailableError struct {
	Detail string
}

// Error returns "unavailable: " and the detail.
func (e *UnavailableError) Error() string { return "unavailable: " + e.Detail }

// HeldError is the refusal of an Exclusive AcquireFence while a live
// holder owns the fence: Holder is its token and Remaining what is left of
// its lease. No token was issued. A holder that acquires again while live
// gets its own token here (docs/host-store-contract.md#edges).
type HeldError struct {
	Holder    FenceToken
	Remaining time.Duration
}

// Error returns "held: token N holds the fence for D more".
func (e *HeldError) Error() string {
	return fmt.Sprintf("held: token %d holds the fence for %s more", e.Holder, e.Remaining)
}

// ErrorKind names which of the six error types of this package an error
// is, or that it is none of them (see KindOf).
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

// KindOf returns the kind of err. It looks through wrapping with errors.As
// and errors.Is, trying the kinds in the order of the constants above.
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
