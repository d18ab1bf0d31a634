package reference

import (
	"slices"

	"github.com/conform-spi/conform/hoststore"
)

// nodeMax is the most entries (keys of a leaf, children of an inner node)
// a node of the name index holds before it splits.
const nodeMax = 32

// node is one node of a persistent B+tree keyed by scope name in byte
// order (Go string comparison). A node is never changed once reachable
// from a published root: insert and remove copy the path they change, so
// a reader holding an old root keeps a consistent tree, and a Model clone
// shares roots at no cost. A leaf holds its entries' keys and values side
// by side, so a page of a listing reads a few contiguous arrays; an inner
// node holds, for each child, the smallest key under it. Nodes that
// removals leave small are not merged (an empty one is dropped), so the
// depth never grows by removing. A nil *node is the empty tree.
type node[V any] struct {
	keys []hoststore.ScopeName
	vals []V        // leaf only, aligned with keys
	kids []*node[V] // inner only, aligned with keys
}

func (n *node[V]) leaf() bool { return n.kids == nil }

// child returns the index of the child of inner node n whose keys k falls
// among: the last child whose smallest key is at most k, else the first.
func (n *node[V]) child(k hoststore.ScopeName) int {
	i, found := slices.BinarySearch(n.keys, k)
	if found {
		return i
	}
	return max(i-1, 0)
}

// treeGet returns the value stored under k.
func treeGet[V any](t *node[V], k hoststore.ScopeName) (V, bool) {
	for t != nil && !t.leaf() {
		t = t.kids[t.child(k)]
	}
	if t != nil {
		if i, found := slices.BinarySearch(t.keys, k); found {
			return t.vals[i], true
		}
	}
	var zero V
	return zero, false
}

// treeInsert returns a tree holding k with value v, sharing every node off
// the changed path with t. k must not be in t.
func treeInsert[V any](t *node[V], k hoststore.ScopeName, v V) *node[V] {
	if t == nil {
		return &node[V]{keys: []hoststore.ScopeName{k}, vals: []V{v}}
	}
	a, b := insertInto(t, k, v)
	if b == nil {
		return a
	}
	return &node[V]{keys: []hoststore.ScopeName{a.keys[0], b.keys[0]}, kids: []*node[V]{a, b}}
}

// insertInto returns the copy of n holding k, split in two when it grew
// past nodeMax (b nil otherwise).
func insertInto[V any](n *node[V], k hoststore.ScopeName, v V) (a, b *node[V]) {
	if n.leaf() {
		i, _ := slices.BinarySearch(n.keys, k)
		return split(&node[V]{keys: slices.Insert(slices.Clip(n.keys), i, k), vals: slices.Insert(slices.Clip(n.vals), i, v)})
	}
	i := n.child(k)
	ca, cb := insertInto(n.kids[i], k, v)
	c := &node[V]{keys: slices.Clone(n.keys), kids: slices.Clone(n.kids)}
	c.keys[i], c.kids[i] = ca.keys[0], ca
	if cb != nil {
		c.keys = slices.Insert(c.keys, i+1, cb.keys[0])
		c.kids = slices.Insert(c.kids, i+1, cb)
	}
	return split(c)
}

// split halves n when it holds more than nodeMax entries.
func split[V any](n *node[V]) (a, b *node[V]) {
	if len(n.keys) <= nodeMax {
		return n, nil
	}
	h := len(n.keys) / 2
	a = &node[V]{keys: slices.Clone(n.keys[:h])}
	b = &node[V]{keys: slices.Clone(n.keys[h:])}
	if n.leaf() {
		a.vals, b.vals = slices.Clone(n.vals[:h]), slices.Clone(n.vals[h:])
	} else {
		a.kids, b.kids = slices.Clone(n.kids[:h]), slices.Clone(n.kids[h:])
	}
	return a, b
}

// treeRemove returns a tree without k (t itself when k is absent).
func treeRemove[V any](t *node[V], k hoststore.ScopeName) *node[V] {
	if t == nil {
		return nil
	}
	n, changed := removeFrom(t, k)
	if !changed {
		return t
	}
	for n != nil && !n.leaf() && len(n.kids) == 1 {
		n = n.kids[0]
	}
	return n
}

// removeFrom returns the copy of n without k (nil when it ends empty), and
// whether k was there.
func removeFrom[V any](n *node[V], k hoststore.ScopeName) (*node[V], bool) {
	if n.leaf() {
		i, found := slices.BinarySearch(n.keys, k)
		if !found {
			return n, false
		}
		if len(n.keys) == 1 {
			return nil, true
		}
		return &node[V]{keys: slices.Delete(slices.Clone(n.keys), i, i+1), vals: slices.Delete(slices.Clone(n.vals), i, i+1)}, true
	}
	i := n.child(k)
	ch, changed := removeFrom(n.kids[i], k)
	if !changed {
		return n, false
	}
	if ch == nil {
		if len(n.kids) == 1 {
			return nil, true
		}
		return &node[V]{keys: slices.Delete(slices.Clone(n.keys), i, i+1), kids: slices.Delete(slices.Clone(n.kids), i, i+1)}, true
	}
	c := &node[V]{keys: slices.Clone(n.keys), kids: slices.Clone(n.kids)}
	c.keys[i], c.kids[i] = ch.keys[0], ch
	return c, true
}

// treeAscend calls fn for every key strictly after after (from the first
// when after is nil) in byte order, until fn returns false. Reaching the
// first key costs O(log n); each further key O(1) amortised.
func treeAscend[V any](t *node[V], after *hoststore.ScopeName, fn func(hoststore.ScopeName, V) bool) {
	if t == nil {
		return
	}
	type frame struct {
		n *node[V]
		i int
	}
	var arr [16]frame
	stack := arr[:0]
	n := t
	for !n.leaf() {
		i := 0
		if after != nil {
			i = n.child(*after)
		}
		stack = append(stack, frame{n, i})
		n = n.kids[i]
	}
	j := 0
	if after != nil {
		var found bool
		if j, found = slices.BinarySearch(n.keys, *after); found {
			j++
		}
	}
	for {
		for ; j < len(n.keys); j++ {
			if !fn(n.keys[j], n.vals[j]) {
				return
			}
		}
		// Climb to the first ancestor with a child to the right, then go
		// down its leftmost path.
		for len(stack) > 0 && stack[len(stack)-1].i+1 >= len(stack[len(stack)-1].n.kids) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		top.i++
		n = top.n.kids[top.i]
		for !n.leaf() {
			stack = append(stack, frame{n, 0})
			n = n.kids[0]
		}
		j = 0
	}
}
