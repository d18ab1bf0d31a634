package reference

import "github.com/conform-spi/conform/hoststore"

// node is one node of a persistent treap keyed by scope name in byte order
// (Go string comparison). A node is never changed once reachable from a
// published root: insert and remove copy the path they change, so a reader
// holding an old root keeps a consistent tree, and a Model clone shares
// roots at no cost. Priorities are a hash of the key, so the shape is
// deterministic: the same set of names always gives the same tree.
type node[V any] struct {
	key         hoststore.ScopeName
	val         V
	prio        uint64
	left, right *node[V]
}

// keyPrio hashes a name to its treap priority (FNV-1a, then a splitmix64
// finaliser so that similar names spread).
func keyPrio(k hoststore.ScopeName) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(k); i++ {
		h ^= uint64(k[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// treeGet answers the value stored under k.
func treeGet[V any](t *node[V], k hoststore.ScopeName) (V, bool) {
	for t != nil {
		switch {
		case k < t.key:
			t = t.left
		case k > t.key:
			t = t.right
		default:
			return t.val, true
		}
	}
	var zero V
	return zero, false
}

// treeInsert answers a root holding k with value v, sharing every node off
// the changed path with t. k must not be in t.
func treeInsert[V any](t *node[V], k hoststore.ScopeName, v V) *node[V] {
	return insertNode(t, &node[V]{key: k, val: v, prio: keyPrio(k)})
}

func insertNode[V any](t, n *node[V]) *node[V] {
	if t == nil {
		return n
	}
	if n.prio > t.prio {
		n.left, n.right = treeSplit(t, n.key)
		return n
	}
	c := *t
	if n.key < t.key {
		c.left = insertNode(t.left, n)
	} else {
		c.right = insertNode(t.right, n)
	}
	return &c
}

// treeSplit answers the keys of t below k and above k as two trees (k
// itself is not in t), copying the nodes it changes.
func treeSplit[V any](t *node[V], k hoststore.ScopeName) (lo, hi *node[V]) {
	if t == nil {
		return nil, nil
	}
	c := *t
	if t.key < k {
		c.right, hi = treeSplit(t.right, k)
		return &c, hi
	}
	lo, c.left = treeSplit(t.left, k)
	return lo, &c
}

// treeRemove answers a root without k (t itself when k is absent).
func treeRemove[V any](t *node[V], k hoststore.ScopeName) *node[V] {
	if t == nil {
		return nil
	}
	switch {
	case k < t.key:
		l := treeRemove(t.left, k)
		if l == t.left {
			return t
		}
		c := *t
		c.left = l
		return &c
	case k > t.key:
		r := treeRemove(t.right, k)
		if r == t.right {
			return t
		}
		c := *t
		c.right = r
		return &c
	}
	return treeMerge(t.left, t.right)
}

// treeMerge joins two trees where every key of a sorts before every key of b.
func treeMerge[V any](a, b *node[V]) *node[V] {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		c := *a
		c.right = treeMerge(a.right, b)
		return &c
	}
	c := *b
	c.left = treeMerge(a, b.left)
	return &c
}

// treeAscend calls fn for every key strictly after after (from the first
// when after is nil) in byte order, until fn answers false. Reaching the
// first key costs O(depth); each further key O(1) amortised.
func treeAscend[V any](t *node[V], after *hoststore.ScopeName, fn func(hoststore.ScopeName, V) bool) {
	var arr [64]*node[V]
	stack := arr[:0]
	for n := t; n != nil; {
		if after == nil || n.key > *after {
			stack = append(stack, n)
			n = n.left
		} else {
			n = n.right
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(n.key, n.val) {
			return
		}
		for c := n.right; c != nil; c = c.left {
			stack = append(stack, c)
		}
	}
}
