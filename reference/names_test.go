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

// TestTreeDepth: the tree stays shallow over sequential names (the worst
// case for an unbalanced tree), so a page costs O(limit + log n).
func TestTreeDepth(t *testing.T) {
	var root *node[struct{}]
	for i := 0; i < 100000; i++ {
		root = treeInsert(root, hoststore.ScopeName(padded(i)), struct{}{})
	}
	if d := depth(root); d > 60 {
		t.Fatalf("depth over 100000 sequential names = %d, want at most 60", d)
	}
}

func depth[V any](t *node[V]) int {
	if t == nil {
		return 0
	}
	return 1 + max(depth(t.left), depth(t.right))
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
