// Package hoststore defines the Host Store interface in Go: the
// HostStoreFactory and HostStore interfaces a host store implements, and
// the scopes, batches, fence values, timing and errors they exchange with
// the writer above them and with the conform harness.
//
// The behaviour behind these types is written out in
// docs/host-store-contract.md of this module; each doc comment here points
// to its section. The package imports only the standard library, so a store
// that implements it links nothing of the harness.
package hoststore

import (
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Sizes a batch and its names must keep (docs/host-store-contract.md#limits).
const (
	// MaxBatchBytes bounds the heads plus rows of one batch: 8 MiB.
	MaxBatchBytes = 8 << 20
	// MaxRowBytes bounds one row: 1 MiB.
	MaxRowBytes = 1 << 20
	// MaxScopeNameBytes bounds a scope name: 512 bytes.
	MaxScopeNameBytes = 512
	// MaxCommitIDBytes bounds a commit id: 128 bytes.
	MaxCommitIDBytes = 128
)

// ScopeKind is the kind of a scope. Each kind is a namespace of its own:
// Session/"a" and Record/"a" are two scopes.
type ScopeKind uint8

// The four scope kinds. The zero value is not a kind.
const (
	KindSession ScopeKind = iota + 1
	KindIdentity
	KindMob
	KindRecord
)

// AllKinds lists the four kinds in their numeric order.
var AllKinds = []ScopeKind{KindSession, KindIdentity, KindMob, KindRecord}

// Valid reports whether k is one of the four kinds.
func (k ScopeKind) Valid() bool { return k >= KindSession && k <= KindRecord }

// String returns "Session", "Identity", "Mob" or "Record", or
// "ScopeKind(N)" for a value that is not a kind.
func (k ScopeKind) String() string {
	switch k {
	case KindSession:
		return "Session"
	case KindIdentity:
		return "Identity"
	case KindMob:
		return "Mob"
	case KindRecord:
		return "Record"
	}
	return "ScopeKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseScopeKind returns the kind whose String is s, or an error when s
// names none of the four.
func ParseScopeKind(s string) (ScopeKind, error) {
	for _, k := range AllKinds {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown scope kind %q", s)
}

// ScopeName is the name of a scope. No two scopes of one kind share a
// name. A valid name is 1 to MaxScopeNameBytes bytes of valid UTF-8 with no
// control character (Unicode category Cc: C0, DEL and C1).
type ScopeName string

// ParseScopeName returns s as a ScopeName, or an error that says why s is
// not a valid name.
func ParseScopeName(s string) (ScopeName, error) {
	if err := checkIdentifier("scope name", s, MaxScopeNameBytes); err != nil {
		return "", err
	}
	return ScopeName(s), nil
}

// Validate reports why n is not a valid scope name, or nil.
func (n ScopeName) Validate() error { _, err := ParseScopeName(string(n)); return err }

// CommitID identifies a batch. A valid id is 1 to MaxCommitIDBytes bytes of
// valid UTF-8 with no control character. The writer chooses every commit id
// and never gives one id to two different batches
// (docs/host-store-contract.md#writer-rules).
type CommitID string

// ParseCommitID returns s as a CommitID, or an error that says why s is
// not a valid commit id.
func ParseCommitID(s string) (CommitID, error) {
	if err := checkIdentifier("commit id", s, MaxCommitIDBytes); err != nil {
		return "", err
	}
	return CommitID(s), nil
}

// Validate reports why c is not a valid commit id, or nil.
func (c CommitID) Validate() error { _, err := ParseCommitID(string(c)); return err }

func checkIdentifier(what, s string, max int) error {
	if len(s) == 0 {
		return fmt.Errorf("%s is empty", what)
	}
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, over the limit of %d", what, len(s), max)
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return fmt.Errorf("%s is not valid UTF-8 at byte %d", what, i)
			}
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("%s has a control character %U at byte %d", what, r, i)
		}
	}
	return nil
}

// ScopeRef names one scope: its kind and its name.
type ScopeRef struct {
	Kind ScopeKind
	Name ScopeName
}

// String returns the scope as Kind/"name", the name quoted as Go quotes it.
func (r ScopeRef) String() string { return r.Kind.String() + "/" + strconv.Quote(string(r.Name)) }

// Validate reports why r does not name a scope, or nil.
func (r ScopeRef) Validate() error {
	if !r.Kind.Valid() {
		return fmt.Errorf("scope kind %d is not a kind", uint8(r.Kind))
	}
	return r.Name.Validate()
}

// ScopeVersion is a scope's version. A scope starts at FirstVersion; each
// batch that writes it adds one. The writer chooses versions and the store
// records them (docs/host-store-contract.md#model).
type ScopeVersion uint64

// FirstVersion is the version a scope has once the batch that creates it
// has landed.
const FirstVersion ScopeVersion = 1

// FenceToken is a fence token. A store issues tokens of 1 and above, each
// higher than every token the realm issued before it
// (docs/host-store-contract.md#op-acquire-fence).
type FenceToken uint64

// RowIndex is a row's index within its scope. The first row a scope ever
// gets has index 0, and removing rows never renumbers the rest
// (docs/host-store-contract.md#model).
type RowIndex uint64

// Row is one row of a scope: its stable index and its opaque bytes.
type Row struct {
	Index RowIndex
	Data  []byte
}

// VersionedHead is what LoadHead returns for a visible scope: its version,
// the id of the commit that produced that version, and the head bytes. The
// writer compares CommitID with its own batch to settle an unknown outcome.
type VersionedHead struct {
	Version  ScopeVersion
	CommitID CommitID
	Head     []byte
}

// Clone returns a deep copy of h.
func (h VersionedHead) Clone() VersionedHead {
	h.Head = cloneBytes(h.Head)
	return h
}

// NamedHead is one entry of a listing: a scope's name and its visible head.
type NamedHead struct {
	Name ScopeName
	Head VersionedHead
}

// HeadPage is one page of ListHeads. A non-nil Next is the cursor to pass
// as after for the following page; nil means no more scopes follow.
type HeadPage struct {
	Heads []NamedHead
	Next  *ScopeName
}

// AcquireMode tells AcquireFence what to do about a live holder.
type AcquireMode uint8

// The two modes of AcquireFence.
const (
	// Exclusive refuses with *HeldError while another holder's lease is live.
	Exclusive AcquireMode = iota
	// Takeover issues a token even over a live holder.
	Takeover
)

// String returns "Exclusive", "Takeover", or "AcquireMode(N)" for a value
// that is not a mode.
func (m AcquireMode) String() string {
	switch m {
	case Exclusive:
		return "Exclusive"
	case Takeover:
		return "Takeover"
	}
	return "AcquireMode(" + strconv.Itoa(int(m)) + ")"
}

// FenceGrant is what AcquireFence returns: the new token, and how much of
// the previous holder's lease was left when a takeover ended it. The
// duration is zero when nobody was live.
type FenceGrant struct {
	Token           FenceToken
	SupersededLease time.Duration
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// Ptr returns a pointer to v, for the optional fields of ScopeUpdate.
func Ptr[T any](v T) *T { return &v }
