package admission

import (
	"fmt"
	"strings"
)

// checkSet applies the two rules of adm:order to a set, before anything is locked:
// "An operation that takes more than one fence takes them in one global
// order: U, then C by realm id, then R from the chain root out to the head,
// then the fence beside a document. Every comparison is by bytes. Two realm
// fences go together only as a composed chain's ... and a fence beside a
// document is only ever the one fence of its operation." A set is refused
// with CauseOrder when it is empty, holds a fence no constructor built, is
// not in that order (a fence twice included), mixes two chains, or holds a
// document's fence beside another.
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

// inOrder checks that b may come right after a.
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
