package admission

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// FenceFile is the name of every fence file: "Every fence file is
// <directory>/admission.lock."
const FenceFile = "admission.lock"

// Kind is a fence's place in the global order: U, then C, then R, then the
// fence beside a document.
type Kind uint8

const (
	// KindUser is U, the user root's fence.
	KindUser Kind = iota + 1
	// KindCredential is C, a realm's fence under the credential root.
	KindCredential
	// KindRealm is R, a realm's fence under the state root, with its position
	// in a composed chain.
	KindRealm
	// KindDocument is the fence beside a document; it is only ever alone.
	KindDocument
)

// String is "U", "C", "R" or "D".
func (k Kind) String() string {
	switch k {
	case KindUser:
		return "U"
	case KindCredential:
		return "C"
	case KindRealm:
		return "R"
	case KindDocument:
		return "D"
	}
	return "invalid"
}

// Fence names one fence file and its place in the order. The zero Fence is
// invalid and refused with CauseOrder; build fences with a Layout or with
// DocumentFence.
type Fence struct {
	kind  Kind
	dir   string
	realm string
	chain uint64 // KindRealm: the RealmChain call that built it
	pos   int    // KindRealm: position from the chain root
}

// Kind is the fence's kind.
func (f Fence) Kind() Kind { return f.kind }

// Dir is the directory the fence guards (cleaned).
func (f Fence) Dir() string { return f.dir }

// Path is <Dir>/admission.lock.
func (f Fence) Path() string { return filepath.Join(f.dir, FenceFile) }

// Realm is the realm id of a C or R fence, and "" otherwise.
func (f Fence) Realm() string { return f.realm }

// Position is an R fence's position in its chain, 0 at the root; -1 for
// other kinds.
func (f Fence) Position() int {
	if f.kind != KindRealm {
		return -1
	}
	return f.pos
}

// String names the fence for messages, e.g. "R[1] ops at /state/realms/ops".
func (f Fence) String() string {
	switch f.kind {
	case KindCredential:
		return fmt.Sprintf("C %s at %s", f.realm, f.Path())
	case KindRealm:
		return fmt.Sprintf("R[%d] %s at %s", f.pos, f.realm, f.Path())
	case KindUser, KindDocument:
		return fmt.Sprintf("%s at %s", f.kind, f.Path())
	}
	return "invalid fence"
}

// DocumentFence is the fence beside a document: <dir of document>/admission.lock.
func DocumentFence(document string) Fence {
	return Fence{kind: KindDocument, dir: filepath.Dir(filepath.Clean(document))}
}

// Layout places the U, C and R fences of an install under its roots. A
// realm's directory is <root>/realms/<RealmDir(id)>.
type Layout struct {
	// UserRoot holds U, the user root's fence.
	UserRoot string
	// CredentialRoot holds each realm's C fence.
	CredentialRoot string
	// StateRoot holds each realm's R fence.
	StateRoot string
}

// RealmsDir is the directory under a root that holds its realms' directories.
const RealmsDir = "realms"

// User is U: <UserRoot>/admission.lock.
func (l Layout) User() Fence {
	return Fence{kind: KindUser, dir: filepath.Clean(l.UserRoot)}
}

// Credential is C for realm: <CredentialRoot>/realms/<RealmDir(realm)>/admission.lock.
// A bad realm id is refused with CauseRealmID.
func (l Layout) Credential(realm string) (Fence, error) {
	name, err := RealmDir(realm)
	if err != nil {
		return Fence{}, err
	}
	return Fence{kind: KindCredential, dir: filepath.Join(l.CredentialRoot, RealmsDir, name), realm: realm}, nil
}

var chains atomic.Uint64

// RealmChain builds the R fences of one composed chain, from its root
// (chain[0]) out to its head, with their positions. It is the one function
// that gives realm fences their chain positions, and only R fences of the
// same call go together in a set. A bad realm id is refused with
// CauseRealmID, an empty chain or a realm named twice with CauseOrder.
func (l Layout) RealmChain(chain ...string) ([]Fence, error) {
	if len(chain) == 0 {
		return nil, unavailable(CauseOrder, "", "an empty realm chain", nil)
	}
	id := chains.Add(1)
	fences := make([]Fence, 0, len(chain))
	seen := make(map[string]bool, len(chain))
	for i, realm := range chain {
		name, err := RealmDir(realm)
		if err != nil {
			return nil, err
		}
		if seen[realm] {
			return nil, unavailable(CauseOrder, "", fmt.Sprintf("realm %q is twice in the chain", realm), nil)
		}
		seen[realm] = true
		fences = append(fences, Fence{kind: KindRealm, dir: filepath.Join(l.StateRoot, RealmsDir, name), realm: realm, chain: id, pos: i})
	}
	return fences, nil
}

// maxName is the longest directory name the realm layout makes (NAME_MAX).
const maxName = 255

// RealmDir sanitizes a realm id into its directory name. The id ".", "..",
// an empty id, and any id of more than one path component (one holding a
// '/') are refused with CauseRealmID. Bytes outside [A-Za-z0-9._-] are
// written %XX (upper-case hex), so distinct ids give distinct names; a name
// longer than 255 bytes is refused too.
func RealmDir(realm string) (string, error) {
	switch {
	case realm == "", realm == ".", realm == "..":
		return "", unavailable(CauseRealmID, realm, "not a realm id", nil)
	case strings.ContainsRune(realm, '/'):
		return "", unavailable(CauseRealmID, realm, "more than one path component", nil)
	}
	var b strings.Builder
	for i := 0; i < len(realm); i++ {
		c := realm[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() > maxName {
		return "", unavailable(CauseRealmID, realm, "too long for a directory name", nil)
	}
	return b.String(), nil
}
