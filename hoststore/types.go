// Package hoststore is the Host Store SPI in Go: the values, batches, errors,
// fence timing and the HostStore interface that a host store implements and
// that the conform harness certifies.
//
// The contract is the Host Store SPI specification (host-store-spi.txt); this
// package fixes its Go shape as ../shared/design/go-spi.md describes, and
// depends on nothing but the standard library. Names follow that page; the
// helpers added here (Clone methods, ScopeRef.String, Ptr helpers) rename
// nothing.
package hoststore

import (
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of the contract ("Limits" in the spec).
const (
	// MaxBatchBytes bounds the heads plus rows of one batch: 8 MiB.
	MaxBatchBytes = 8 << 20
	// MaxRowBytes bounds one row: 1 MiB.
	MaxRowBytes = 1 << 20
	// MaxScopeNameBytes bounds a scope name: 512 bytes, not empty, no control characters.
	MaxScopeNameBytes = 512
	// MaxCommitIDBytes bounds a commit id: 128 bytes, not empty, no control characters.
	MaxCommitIDBytes = 128
)

// ScopeKind is the kind of a scope: Session, Identity, Mob or Record.
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

// String names the kind as the spec does ("Session", ...).
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

// ParseScopeKind is the inverse of String for the four kinds.
func ParseScopeKind(s string) (ScopeKind, error) {
	for _, k := range AllKinds {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown scope kind %q", s)
}

// ScopeName names a scope, unique among the scopes of its kind in a realm:
// 1..MaxScopeNameBytes bytes of valid UTF-8 with no control character
// (Unicode category Cc: C0, DEL and C1).
type ScopeName string

// ParseScopeName validates s as a scope name.
func ParseScopeName(s string) (ScopeName, error) {
	if err := checkIdentifier("scope name", s, MaxScopeNameBytes); err != nil {
		return "", err
	}
	return ScopeName(s), nil
}

// Validate reports why n is not a valid scope name, or nil.
func (n ScopeName) Validate() error { _, err := ParseScopeName(string(n)); return err }

// CommitID identifies a commit batch: 1..MaxCommitIDBytes bytes of valid
// UTF-8 with no control character. Core assigns every commit id and never
// reuses one for different content.
type CommitID string

// ParseCommitID validates s as a commit id.
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

// String renders the scope as Kind/"name".
func (r ScopeRef) String() string { return r.Kind.String() + "/" + strconv.Quote(string(r.Name)) }

// Validate reports why r does not name a scope, or nil.
func (r ScopeRef) Validate() error {
	if !r.Kind.Valid() {
		return fmt.Errorf("scope kind %d is not a kind", uint8(r.Kind))
	}
	return r.Name.Validate()
}

// ScopeVersion is a scope's version. A scope is created at FirstVersion and
// every committed batch that touches it moves it to the next version.
type ScopeVersion uint64

// FirstVersion is the version of a scope its creating batch writes.
const FirstVersion ScopeVersion = 1

// FenceToken is a fence token. Tokens a store issues are >= 1 and strictly
// increase across the realm.
type FenceToken uint64

// RowIndex is a row's stable index. The first row a scope ever gets has index 0.
type RowIndex uint64

// Row is one row of a scope: its stable index and its opaque bytes.
type Row struct {
	Index RowIndex
	Data  []byte
}

// VersionedHead is a scope's visible head: its version, the commit id of the
// batch that wrote that version, and the opaque head bytes.
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

// HeadPage is one page of a listing. Next names where to read on; it is nil
// when the listing has ended.
type HeadPage struct {
	Heads []NamedHead
	Next  *ScopeName
}

// AcquireMode says how acquire_fence treats a live holder.
type AcquireMode uint8

const (
	// Exclusive returns HeldError when a live holder exists.
	Exclusive AcquireMode = iota
	// Takeover supersedes any holder.
	Takeover
)

// String names the mode.
func (m AcquireMode) String() string {
	switch m {
	case Exclusive:
		return "Exclusive"
	case Takeover:
		return "Takeover"
	}
	return "AcquireMode(" + strconv.Itoa(int(m)) + ")"
}

// FenceGrant is what an acquire returns: the new token, and what remained of
// a superseded live holder's lease (zero when no holder was live).
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
