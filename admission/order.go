package admission

import (
	"fmt"
	"strings"
)

// checkSet enforces adm:order on a set before any fence is touched. The
// set must rank its fences by Kind. C fences must come by realm id in
// increasing byte order. R fences must all come from one RealmChain call,
// root first. A document's fence must be alone. checkSet returns a
// CauseOrder refusal for an empty set, a fence no constructor built, a
// fence file named twice, a set out of that order, R fences of two chains,
// or a document's fence beside another fence.
func checkSet(set []Fence) error {
	if len(set) == 0 {
		return unavailable(CauseOrder, "", "an empty set", nil)
	}
	paths := make(map[string]bool, len(set))
	for i, f := range set {
		if f.kind < KindUser || f.kind > KindDocument {
			return unavailable(CauseOrder, "", fmt.Sprintf("fence %d was not built by a layout or DocumentFence", i), nil)
		}
		if f.kind == KindDocument && len(set) > 1 {
			return unavailable(CauseOrder, f.Path(), "a document's fence is only ever alone", nil)
		}
		if paths[f.Path()] {
			return unavailable(CauseOrder, f.Path(), "the same fence file twice", nil)
		}
		paths[f.Path()] = true
		if i > 0 {
			if err := inOrder(set[i-1], f); err != nil {
				return err
			}
		}
	}
	return nil
}

// inOrder returns nil when b may come right after a in a set, and a
// CauseOrder refusal otherwise.
func inOrder(a, b Fence) error {
	if a.kind != b.kind {
		if a.kind > b.kind {
			return unavailable(CauseOrder, b.Path(), fmt.Sprintf("%s comes before %s", b.kind, a.kind), nil)
		}
		return nil
	}
	switch a.kind {
	case KindCredential:
		if strings.Compare(a.realm, b.realm) >= 0 {
			return unavailable(CauseOrder, b.Path(), fmt.Sprintf("C %q does not come after C %q by bytes", b.realm, a.realm), nil)
		}
	case KindRealm:
		if a.chain != b.chain {
			return unavailable(CauseOrder, b.Path(), "realm fences of two chains", nil)
		}
		if a.pos >= b.pos {
			return unavailable(CauseOrder, b.Path(), fmt.Sprintf("R[%d] does not come after R[%d]", b.pos, a.pos), nil)
		}
	default:
		return unavailable(CauseOrder, b.Path(), fmt.Sprintf("%s twice", b.kind), nil)
	}
	return nil
}
