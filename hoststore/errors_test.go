package hoststore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&hoststore.ConflictError{Scope: sess("s")}, `conflict: scope Session/"s" is absent`},
		{&hoststore.ConflictError{Scope: rec("r"), Current: hoststore.Ptr(hoststore.ScopeVersion(7))}, `conflict: scope Record/"r" is version 7`},
		{&hoststore.FencedOutError{Current: 9}, "fenced out: token 9 is current"},
		{&hoststore.IndeterminateError{Detail: "connection reset"}, "indeterminate: connection reset"},
		{&hoststore.InvalidError{Detail: "row too large"}, "invalid: row too large"},
		{&hoststore.UnavailableError{Detail: "no route"}, "unavailable: no route"},
		{&hoststore.HeldError{Holder: 3, Remaining: 1500 * time.Millisecond}, "held: token 3 holds the fence for 1.5s more"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%T.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestKindOf(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelExpired()

	contract := []struct {
		err  error
		want hoststore.ErrorKind
	}{
		{&hoststore.ConflictError{Scope: sess("s")}, hoststore.ErrKindConflict},
		{&hoststore.FencedOutError{Current: 2}, hoststore.ErrKindFencedOut},
		{&hoststore.IndeterminateError{Detail: "d"}, hoststore.ErrKindIndeterminate},
		{&hoststore.InvalidError{Detail: "d"}, hoststore.ErrKindInvalid},
		{&hoststore.UnavailableError{Detail: "d"}, hoststore.ErrKindUnavailable},
		{&hoststore.HeldError{Holder: 1, Remaining: sec}, hoststore.ErrKindHeld},
		{context.Canceled, hoststore.ErrKindContext},
		{context.DeadlineExceeded, hoststore.ErrKindContext},
		{canceled.Err(), hoststore.ErrKindContext},
		{expired.Err(), hoststore.ErrKindContext},
	}
	for _, tc := range contract {
		wrapped := fmt.Errorf("commit: %w", tc.err)
		twice := fmt.Errorf("store: %w", wrapped)
		joined := errors.Join(errors.New("cleanup failed"), tc.err)
		for _, e := range []error{tc.err, wrapped, twice, joined} {
			if got := hoststore.KindOf(e); got != tc.want {
				t.Errorf("KindOf(%q) = %q, want %q", e, got, tc.want)
			}
		}
		// %v keeps the text but drops the chain: no longer the contract's error.
		flat := fmt.Errorf("commit: %v", tc.err)
		if got := hoststore.KindOf(flat); got != hoststore.ErrKindOther {
			t.Errorf("KindOf(%q) (wrapped with %%v) = %q, want %q", flat, got, hoststore.ErrKindOther)
		}
	}

	others := []error{
		errors.New("boom"),
		errors.New("conflict: scope Session/\"s\" is absent"),
		fmt.Errorf("wrapped: %w", errors.New("boom")),
	}
	for _, e := range others {
		if got := hoststore.KindOf(e); got != hoststore.ErrKindOther {
			t.Errorf("KindOf(%q) = %q, want %q", e, got, hoststore.ErrKindOther)
		}
	}
	if got := hoststore.KindOf(nil); got != hoststore.ErrKindNone {
		t.Errorf("KindOf(nil) = %q, want %q", got, hoststore.ErrKindNone)
	}
}

func TestErrorKindNames(t *testing.T) {
	// A map literal with two equal constant keys does not compile, so this
	// also keeps the nine kinds distinct.
	names := map[hoststore.ErrorKind]string{
		hoststore.ErrKindNone:          "",
		hoststore.ErrKindConflict:      "Conflict",
		hoststore.ErrKindFencedOut:     "FencedOut",
		hoststore.ErrKindIndeterminate: "Indeterminate",
		hoststore.ErrKindInvalid:       "Invalid",
		hoststore.ErrKindUnavailable:   "Unavailable",
		hoststore.ErrKindHeld:          "Held",
		hoststore.ErrKindContext:       "Context",
		hoststore.ErrKindOther:         "Other",
	}
	for k, want := range names {
		if string(k) != want {
			t.Errorf("ErrorKind %q, want %q (the error table of docs/host-store-contract.md#errors)", k, want)
		}
	}
}
