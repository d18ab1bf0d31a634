package admission

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// FenceFile is the file name of every fence. The fence that guards a
// directory is that directory's admission.lock.
const FenceFile = "admission.lock"

// Kind is the kind of a fence. It is also the fence's rank in the global
// order of adm:order: KindUser ranks first and KindDocument last.
type Kind uint8

const (
	// KindUser is U, the fence of the user root.
	KindUser Kind = iota + 1
	// KindCredential is C, the fence of a realm under the credential root.
	// C fences go by realm id, compared as bytes.
	KindCredential
	// KindRealm is R, the fence of a realm under the state root. R fences go
	// by their position in one composed chain (see Layout.RealmChain).
	KindRealm
	// KindDocument is the fence beside a document. A set that holds one holds
	// nothing else.
	KindDocument
)

// String returns "U", "C", "R" or "D", or "invalid" for any other value.
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

// Fence names one fence file and its place in the global order. Build
// fences with a Layout or with DocumentFence. The zero Fence is invalid; a
// set that holds it is refused with CauseOrder.
type Fence struct {
	kind  Kind
	dir   string
	realm string
	chain uint64 // KindRealm: the RealmChain call that built it
	pos   int    // KindRealm: position from the chain root
}

// Kind returns the fence's kind.
func (f Fence) Kind() Kind { return f.kind }

// Dir returns the directory the fence guards, cleaned.
func (f Fence) Dir() string { return f.dir }

// Path returns the fence file, Dir joined with FenceFile.
func (f Fence) Path() string { return filepath.Join(f.dir, FenceFile) }

// Realm returns the realm id of a C or R fence, and "" for other kinds.
func (f Fence) Realm() string { return f.realm }

// Position returns an R fence's position in its chain, 0 at the root. It
// returns -1 for other kinds.
func (f Fence) Position() int {
	if f.kind != KindRealm {
		return -1
	}
	return f.pos
}

// String returns the fence's name for messages, such as
// "R[1] ops at /state/realms/ops".
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

// DocumentFence returns the fence beside document: the admission.lock of
// the document's directory. A set that holds it must hold nothing else.
func DocumentFence(document string) Fence {
	return Fence{kind: KindDocument, dir: filepath.Dir(filepath.Clean(document))}
}

// Layout places the U, C and R fences of an install under its roots. A
// realm's directory under a root is root/realms/RealmDir(id).
type Layout struct {
	// UserRoot holds U, the user root's fence.
	UserRoot string
	// CredentialRoot holds each realm's C fence.
	CredentialRoot string
	// StateRoot holds each realm's R fence.
	StateRoot string
}

// RealmsDir is the directory under a root that holds the realms'
// directories.
const RealmsDir = "realms"

// User returns U, the fence in UserRoot.
func (l Layout) User() Fence {
	return Fence{kind: KindUser, dir: filepath.Clean(l.UserRoot)}
}

// Credential returns C for realm, the fence in
// CredentialRoot/realms/RealmDir(realm). A bad realm id is refused with
// CauseRealmID.
func (l Layout) Credential(realm string) (Fence, error) {
	name, err := RealmDir(realm)
	if err != nil {
		return Fence{}, err
	}
	return Fence{kind: KindCredential, dir: filepath.Join(l.CredentialRoot, RealmsDir, name), realm: realm}, nil
}

// chains numbers RealmChain calls, so a set can tell two chains apart.
var chains atomic.Uint64

// RealmChain returns the R fences of one composed chain, in
// StateRoot/realms, from its root (chain[0]) out to its head. Each fence
// knows its position and the call that made it. Only R fences from a single
// call may share a set (adm:order); no other function makes R fences. A bad
// realm id is refused with CauseRealmID. An empty chain, or a realm named
// twice, is refused with CauseOrder.
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

// RealmDir returns the directory name of a realm id. Bytes outside
// [A-Za-z0-9._-] are written %XX in upper-case hex, so distinct ids give
// distinct names. The ids ".", ".." and "", an id that holds a '/', and an
// id whose name would be longer than 255 bytes are refused with
// CauseRealmID (adm:realm-ids).
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
