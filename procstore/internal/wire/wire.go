// Package wire is the store process protocol's messages
// (docs/store-process-protocol.md) and their conversion to and from package
// hoststore's types. Both sides of the protocol use it: package procstore
// (the harness's side) and package procstore/serve (a Go store's side).
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// Version is the protocol version this package speaks.
const Version = 1

// The environment a store process starts with.
const (
	EnvRealm    = "CONFORM_REALM"
	EnvProtocol = "CONFORM_STORE_PROTOCOL"
)

// The requests' op values, and the one call's.
const (
	OpHello    = "hello"
	OpAcquire  = "acquire_fence"
	OpRenew    = "renew_fence"
	OpLoadHead = "load_head"
	OpList     = "list_heads"
	OpReadRows = "read_rows"
	OpCommit   = "commit"
	OpLapse    = "lapse_fence_leases"
	OpAt       = "at"
)

// Message is any line of the protocol, either side: a request (ID and Op),
// an answer (ID and OK or Error), a call (Call and Op "at") or a call's
// answer (Call and OK or Error). Fields a message does not use stay zero
// and are omitted.
type Message struct {
	ID   *uint64 `json:"id,omitempty"`
	Call *uint64 `json:"call,omitempty"`
	Op   string  `json:"op,omitempty"`

	Versions []int   `json:"versions,omitempty"`
	Mode     string  `json:"mode,omitempty"`
	Token    *uint64 `json:"token,omitempty"`
	Scope    *Scope  `json:"scope,omitempty"`
	Kind     string  `json:"kind,omitempty"`
	After    *string `json:"after,omitempty"`
	Limit    *int    `json:"limit,omitempty"`
	From     *uint64 `json:"from,omitempty"`
	Batch    *Batch  `json:"batch,omitempty"`
	Sites    *bool   `json:"sites,omitempty"`

	Req      *uint64 `json:"req,omitempty"`
	Site     string  `json:"site,omitempty"`
	CommitID string  `json:"commit_id,omitempty"`

	OK    json.RawMessage `json:"ok,omitempty"`
	Error *Error          `json:"error,omitempty"`
}

// Scope is a hoststore.ScopeRef on the wire.
type Scope struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Update is a hoststore.ScopeUpdate on the wire.
type Update struct {
	Scope         Scope    `json:"scope"`
	Previous      *uint64  `json:"previous"`
	Next          uint64   `json:"next"`
	Head          *[]byte  `json:"head"`
	Append        [][]byte `json:"append"`
	TruncateAfter *uint64  `json:"truncate_after"`
	DropBefore    *uint64  `json:"drop_before"`
	Delete        bool     `json:"delete"`
}

// Batch is a hoststore.CommitBatch on the wire.
type Batch struct {
	CommitID string   `json:"commit_id"`
	Token    uint64   `json:"token"`
	Updates  []Update `json:"updates"`
}

// Error is one of the six contract errors on the wire.
type Error struct {
	Kind        string  `json:"kind"`
	Scope       *Scope  `json:"scope,omitempty"`
	Current     *uint64 `json:"current,omitempty"`
	Detail      string  `json:"detail,omitempty"`
	Holder      *uint64 `json:"holder,omitempty"`
	RemainingNS *int64  `json:"remaining_ns,omitempty"`
}

// MarshalJSON writes only the fields of e's kind, and current as null for
// a conflict over a scope that does not exist.
func (e *Error) MarshalJSON() ([]byte, error) {
	m := map[string]any{"kind": e.Kind}
	switch e.Kind {
	case "conflict":
		m["scope"], m["current"] = e.Scope, e.Current
	case "fenced_out":
		m["current"] = e.Current
	case "held":
		m["holder"], m["remaining_ns"] = e.Holder, e.RemainingNS
	default:
		m["detail"] = e.Detail
	}
	return json.Marshal(m)
}

// Timing is a hoststore.FenceTiming on the wire.
type Timing struct {
	RenewNS  int64  `json:"renew_interval_ns"`
	LeaseNS  int64  `json:"lease_ns"`
	MarginNS *int64 `json:"self_fence_margin_ns,omitempty"`
	MaxNS    *int64 `json:"max_commit_latency_ns,omitempty"`
}

// Hello is the handshake's result.
type Hello struct {
	Version int     `json:"version"`
	Store   string  `json:"store,omitempty"`
	Timing  *Timing `json:"timing,omitempty"`
}

// Grant is acquire_fence's result.
type Grant struct {
	Token            *uint64 `json:"token"`
	SupersededLeaseN *int64  `json:"superseded_lease_ns"`
}

// Head is a visible head on the wire; Name is set in a listing only.
type Head struct {
	Name     string  `json:"name,omitempty"`
	Version  uint64  `json:"version"`
	CommitID string  `json:"commit_id"`
	Head     *[]byte `json:"head"`
}

// HeadResult is load_head's result.
type HeadResult struct {
	Head *Head `json:"head"`
}

// Page is list_heads's result.
type Page struct {
	Heads *[]Head `json:"heads"`
	Next  *string `json:"next"`
}

// Row is a row on the wire.
type Row struct {
	Index *uint64 `json:"index"`
	Data  *[]byte `json:"data"`
}

// Rows is read_rows's result.
type Rows struct {
	Rows *[]Row `json:"rows"`
}

// Empty is the result of the requests that return nothing.
type Empty struct{}

// nonNil returns b, or an empty slice for nil, so that it encodes as ""
// rather than null.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ScopeOf returns s on the wire.
func ScopeOf(s hoststore.ScopeRef) Scope { return Scope{Kind: s.Kind.String(), Name: string(s.Name)} }

// ScopeRef returns the scope s names, or an error for an unknown kind.
func (s Scope) ScopeRef() (hoststore.ScopeRef, error) {
	k, err := hoststore.ParseScopeKind(s.Kind)
	if err != nil {
		return hoststore.ScopeRef{}, err
	}
	return hoststore.ScopeRef{Kind: k, Name: hoststore.ScopeName(s.Name)}, nil
}

// BatchOf returns b on the wire.
func BatchOf(b *hoststore.CommitBatch) *Batch {
	ups := b.Updates()
	out := &Batch{CommitID: string(b.CommitID()), Token: uint64(b.Token()), Updates: make([]Update, len(ups))}
	for i, u := range ups {
		w := Update{Scope: ScopeOf(u.Scope), Next: uint64(u.Next), Delete: u.Delete, Append: make([][]byte, len(u.Append))}
		if u.Previous != nil {
			w.Previous = hoststore.Ptr(uint64(*u.Previous))
		}
		if u.Head != nil {
			w.Head = hoststore.Ptr(nonNil(*u.Head))
		}
		for j, r := range u.Append {
			w.Append[j] = nonNil(r)
		}
		if u.TruncateAfter != nil {
			w.TruncateAfter = hoststore.Ptr(uint64(*u.TruncateAfter))
		}
		if u.DropBefore != nil {
			w.DropBefore = hoststore.Ptr(uint64(*u.DropBefore))
		}
		out.Updates[i] = w
	}
	return out
}

// CommitBatch returns the batch b names, as hoststore.NewCommitBatch
// builds it (and refuses it).
func (b *Batch) CommitBatch() (*hoststore.CommitBatch, error) {
	ups := make([]hoststore.ScopeUpdate, len(b.Updates))
	for i, w := range b.Updates {
		ref, err := w.Scope.ScopeRef()
		if err != nil {
			return nil, err
		}
		u := hoststore.ScopeUpdate{Scope: ref, Next: hoststore.ScopeVersion(w.Next), Delete: w.Delete, Append: w.Append}
		if w.Previous != nil {
			u.Previous = hoststore.Ptr(hoststore.ScopeVersion(*w.Previous))
		}
		if w.Head != nil {
			u.Head = hoststore.Ptr(nonNil(*w.Head))
		}
		if w.TruncateAfter != nil {
			u.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(*w.TruncateAfter))
		}
		if w.DropBefore != nil {
			u.DropBefore = hoststore.Ptr(hoststore.RowIndex(*w.DropBefore))
		}
		ups[i] = u
	}
	return hoststore.NewCommitBatch(hoststore.CommitID(b.CommitID), hoststore.FenceToken(b.Token), ups)
}

// ErrorOf returns err on the wire when it is one of the six contract
// errors, else nil.
func ErrorOf(err error) *Error {
	switch e := contractError(err).(type) {
	case *hoststore.ConflictError:
		w := &Error{Kind: "conflict", Scope: hoststore.Ptr(ScopeOf(e.Scope))}
		if e.Current != nil {
			w.Current = hoststore.Ptr(uint64(*e.Current))
		}
		return w
	case *hoststore.FencedOutError:
		return &Error{Kind: "fenced_out", Current: hoststore.Ptr(uint64(e.Current))}
	case *hoststore.IndeterminateError:
		return &Error{Kind: "indeterminate", Detail: e.Detail}
	case *hoststore.InvalidError:
		return &Error{Kind: "invalid", Detail: e.Detail}
	case *hoststore.UnavailableError:
		return &Error{Kind: "unavailable", Detail: e.Detail}
	case *hoststore.HeldError:
		return &Error{Kind: "held", Holder: hoststore.Ptr(uint64(e.Holder)), RemainingNS: hoststore.Ptr(int64(e.Remaining))}
	}
	return nil
}

// Err returns the contract error e names, or an error saying why e names
// none: an unknown kind, a missing field, a conflict over a scope
// hoststore.ScopeRef.Validate refuses or at a version below the first, or
// a negative remaining_ns.
func (e *Error) Err() (error, error) {
	switch e.Kind {
	case "conflict":
		if e.Scope == nil {
			return nil, fmt.Errorf("a conflict error without its scope")
		}
		ref, err := e.Scope.ScopeRef()
		if err == nil {
			err = ref.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("a conflict error: %v", err)
		}
		ce := &hoststore.ConflictError{Scope: ref}
		if e.Current != nil {
			if *e.Current < uint64(hoststore.FirstVersion) {
				return nil, fmt.Errorf("a conflict error with current version %d, below the first version %d", *e.Current, hoststore.FirstVersion)
			}
			ce.Current = hoststore.Ptr(hoststore.ScopeVersion(*e.Current))
		}
		return ce, nil
	case "fenced_out":
		if e.Current == nil {
			return nil, fmt.Errorf("a fenced_out error without current")
		}
		return &hoststore.FencedOutError{Current: hoststore.FenceToken(*e.Current)}, nil
	case "indeterminate":
		return &hoststore.IndeterminateError{Detail: e.Detail}, nil
	case "invalid":
		return &hoststore.InvalidError{Detail: e.Detail}, nil
	case "unavailable":
		return &hoststore.UnavailableError{Detail: e.Detail}, nil
	case "held":
		if e.Holder == nil || e.RemainingNS == nil || *e.RemainingNS < 0 {
			return nil, fmt.Errorf("a held error without holder or a non-negative remaining_ns")
		}
		return &hoststore.HeldError{Holder: hoststore.FenceToken(*e.Holder), Remaining: time.Duration(*e.RemainingNS)}, nil
	}
	return nil, fmt.Errorf("an error of unknown kind %q", e.Kind)
}

// TimingOf returns t on the wire.
func TimingOf(t hoststore.FenceTiming) *Timing {
	return &Timing{
		RenewNS:  int64(t.RenewInterval()),
		LeaseNS:  int64(t.Lease()),
		MarginNS: hoststore.Ptr(int64(t.SelfFenceMargin())),
		MaxNS:    hoststore.Ptr(int64(t.MaxCommitLatency())),
	}
}

// FenceTiming returns the timing t declares, built by hoststore's
// constructors (which refuse a timing out of the contract's bounds); a nil
// t is the default timing.
func (t *Timing) FenceTiming() (hoststore.FenceTiming, error) {
	if t == nil {
		return hoststore.DefaultFenceTiming(), nil
	}
	renew, lease := time.Duration(t.RenewNS), time.Duration(t.LeaseNS)
	var ft hoststore.FenceTiming
	var err error
	if t.MarginNS != nil {
		ft, err = hoststore.NewFenceTimingWithMargin(renew, lease, time.Duration(*t.MarginNS))
	} else {
		ft, err = hoststore.NewFenceTiming(renew, lease)
	}
	if err != nil || t.MaxNS == nil {
		return ft, err
	}
	return ft.WithMaxCommitLatency(time.Duration(*t.MaxNS))
}

// HeadOf returns h on the wire, named name in a listing ("" otherwise).
func HeadOf(name string, h hoststore.VersionedHead) Head {
	return Head{Name: name, Version: uint64(h.Version), CommitID: string(h.CommitID), Head: hoststore.Ptr(nonNil(h.Head))}
}

// VersionedHead returns the head h names, or an error for a malformed one:
// without its bytes, with a commit id hoststore.ParseCommitID refuses, or
// with a version below hoststore.FirstVersion.
func (h Head) VersionedHead() (hoststore.VersionedHead, error) {
	if h.Head == nil || h.CommitID == "" {
		return hoststore.VersionedHead{}, fmt.Errorf("a head without its bytes or commit id")
	}
	if err := hoststore.CommitID(h.CommitID).Validate(); err != nil {
		return hoststore.VersionedHead{}, fmt.Errorf("a head whose %v", err)
	}
	if h.Version < uint64(hoststore.FirstVersion) {
		return hoststore.VersionedHead{}, fmt.Errorf("a head at version %d, below the first version %d", h.Version, hoststore.FirstVersion)
	}
	return hoststore.VersionedHead{Version: hoststore.ScopeVersion(h.Version), CommitID: hoststore.CommitID(h.CommitID), Head: *h.Head}, nil
}

// contractError returns the first of the six contract errors in err's
// chain, or nil.
func contractError(err error) error {
	var (
		c *hoststore.ConflictError
		f *hoststore.FencedOutError
		i *hoststore.IndeterminateError
		v *hoststore.InvalidError
		u *hoststore.UnavailableError
		h *hoststore.HeldError
	)
	switch {
	case errors.As(err, &c):
		return c
	case errors.As(err, &f):
		return f
	case errors.As(err, &i):
		return i
	case errors.As(err, &v):
		return v
	case errors.As(err, &u):
		return u
	case errors.As(err, &h):
		return h
	}
	return nil
}
