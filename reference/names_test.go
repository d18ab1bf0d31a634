package reference

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// TestTreeAgainstSortedSet checks the persistent tree against a sorted
// slice under random inserts and removes, and that every older root still
// shows its own set.
func TestTreeAgainstSortedSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var root *node[int]
	var set []hoststore.ScopeName
	type snap struct {
		root *node[int]
		set  []hoststore.ScopeName
	}
	var snaps []snap
	for i := 0; i < 3000; i++ {
		k := hoststore.ScopeName(string(rune('a'+rng.IntN(20)))) + hoststore.ScopeName(string(rune('a'+rng.IntN(20))))
		at, found := slices.BinarySearch(set, k)
		if rng.IntN(3) == 0 {
			root = treeRemove(root, k)
			if found {
				set = slices.Delete(slices.Clone(set), at, at+1)
			}
		} else if !found {
			root = treeInsert(root, k, i)
			set = slices.Insert(slices.Clone(set), at, k)
		}
		if i%100 == 0 {
			snaps = append(snaps, snap{root, set})
		}
	}
	snaps = append(snaps, snap{root, set})
	for _, s := range snaps {
		if got := treeKeys(s.root, nil); !slices.Equal(got, s.set) {
			t.Fatalf("tree keys = %v, want %v", got, s.set)
		}
		for _, k := range s.set {
			if _, ok := treeGet(s.root, k); !ok {
				t.Fatalf("treeGet(%q) missed a key", k)
			}
			after := k
			got := treeKeys(s.root, &after)
			at, _ := slices.BinarySearch(s.set, k)
			if !slices.Equal(got, s.set[at+1:]) {
				t.Fatalf("keys after %q = %v, want %v", k, got, s.set[at+1:])
			}
		}
	}
}

func treeKeys[V any](t *node[V], after *hoststore.ScopeName) []hoststore.ScopeName {
	var out []hoststore.ScopeName
	treeAscend(t, after, func(k hoststore.ScopeName, _ V) bool { out = append(out, k); return true })
	return out
}

// TestTreeDepth: the tree stays shallow over sequential names, so a page
// costs O(limit + log n), and no node exceeds nodeMax entries.
func TestTreeDepth(t *testing.T) {
	var root *node[struct{}]
	for i := 0; i < 100000; i++ {
		root = treeInsert(root, hoststore.ScopeName(padded(i)), struct{}{})
	}
	if d := depth(t, root); d > 5 {
		t.Fatalf("depth over 100000 sequential names = %d, want at most 5", d)
	}
	for i := 0; i < 100000; i += 2 {
		root = treeRemove(root, hoststore.ScopeName(padded(i)))
	}
	if got := len(treeKeys(root, nil)); got != 50000 {
		t.Fatalf("%d keys left after removing half of 100000", got)
	}
	for i := 1; i < 100000; i += 2 {
		root = treeRemove(root, hoststore.ScopeName(padded(i)))
	}
	if root != nil {
		t.Fatalf("removing every key left a non-empty tree")
	}
}

// depth returns the depth of t, checking that every leaf is at one depth,
// every node within nodeMax, and every inner key the smallest under it.
func depth[V any](t *testing.T, n *node[V]) int {
	if n == nil {
		return 0
	}
	if len(n.keys) == 0 || len(n.keys) > nodeMax {
		t.Fatalf("a node holds %d entries", len(n.keys))
	}
	if n.leaf() {
		return 1
	}
	d := -1
	for i, c := range n.kids {
		if c.keys[0] != n.keys[i] {
			t.Fatalf("inner key %q, but the child's smallest is %q", n.keys[i], c.keys[0])
		}
		if cd := depth(t, c); d >= 0 && cd != d {
			t.Fatalf("leaves at depths %d and %d", d, cd)
		} else {
			d = cd
		}
	}
	return 1 + d
}

// padded renders i as a fixed-width name, so byte order is numeric order.
func padded(i int) string {
	b := []byte("n0000000")
	for j := len(b) - 1; i > 0; j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
	return string(b)
}
