package hoststore_test

import (
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// wantCopied is what copyFixture's batch must show for as long as it lives,
// written out independently of the slices handed to NewCommitBatch.
func wantCopied() []hoststore.ScopeUpdate {
	return []hoststore.ScopeUpdate{
		{
			Scope:         sess("s"),
			Previous:      hoststore.Ptr(hoststore.ScopeVersion(3)),
			Next:          4,
			Head:          hoststore.Ptr([]byte("head")),
			Append:        [][]byte{[]byte("r0"), []byte("r1")},
			TruncateAfter: hoststore.Ptr(hoststore.RowIndex(5)),
			DropBefore:    hoststore.Ptr(hoststore.RowIndex(1)),
		},
		{Scope: rec("r"), Next: 1, Head: hoststore.Ptr([]byte{}), Append: [][]byte{{}}},
	}
}

// copyFixture builds a batch equal to wantCopied from slices and pointers
// that it hands back, so the test can mutate them afterwards.
func copyFixture(t *testing.T) (*hoststore.CommitBatch, []hoststore.ScopeUpdate) {
	t.Helper()
	in := wantCopied()
	b, err := hoststore.NewCommitBatch("c", 1, in)
	if err != nil {
		t.Fatalf("NewCommitBatch = %q, want the batch accepted", err)
	}
	checkUpdates(t, "before any mutation", b)
	return b, in
}

func checkUpdates(t *testing.T, when string, b *hoststore.CommitBatch) {
	t.Helper()
	got, want := b.Updates(), wantCopied()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Updates() = %+v, want %+v", when, got, want)
	}
	if b.Bytes() != 8 {
		t.Fatalf("%s: Bytes() = %d, want 8", when, b.Bytes())
	}
	if s := b.Scopes(); len(s) != 2 || s[0] != sess("s") || s[1] != rec("r") {
		t.Fatalf("%s: Scopes() = %v, want [%v %v]", when, s, sess("s"), rec("r"))
	}
}

func TestCommitBatchKeepsItsOwnCopy(t *testing.T) {
	mutations := []struct {
		name string
		f    func(in []hoststore.ScopeUpdate)
	}{
		{"head bytes", func(in []hoststore.ScopeUpdate) { (*in[0].Head)[0] = 'X' }},
		{"head slice", func(in []hoststore.ScopeUpdate) { *in[0].Head = []byte("other") }},
		{"empty head grown", func(in []hoststore.ScopeUpdate) { *in[1].Head = append(*in[1].Head, 'x') }},
		{"row bytes", func(in []hoststore.ScopeUpdate) { in[0].Append[0][0] = 'X' }},
		{"row replaced", func(in []hoststore.ScopeUpdate) { in[0].Append[1] = []byte("zz") }},
		{"rows shortened", func(in []hoststore.ScopeUpdate) { in[0].Append = in[0].Append[:1] }},
		{"previous", func(in []hoststore.ScopeUpdate) { *in[0].Previous = 9 }},
		{"truncate after", func(in []hoststore.ScopeUpdate) { *in[0].TruncateAfter = 0 }},
		{"drop before", func(in []hoststore.ScopeUpdate) { *in[0].DropBefore = 0 }},
		{"scope", func(in []hoststore.ScopeUpdate) { in[0].Scope = rec("r") }},
		{"whole update", func(in []hoststore.ScopeUpdate) { in[1] = hoststore.ScopeUpdate{} }},
	}
	for _, m := range mutations {
		t.Run("caller's "+m.name, func(t *testing.T) {
			b, in := copyFixture(t)
			m.f(in)
			checkUpdates(t, "after mutating the caller's "+m.name, b)
		})
		t.Run("Updates() "+m.name, func(t *testing.T) {
			b, _ := copyFixture(t)
			m.f(b.Updates())
			checkUpdates(t, "after mutating what Updates() returned ("+m.name+")", b)
		})
	}
	t.Run("Scopes() element", func(t *testing.T) {
		b, _ := copyFixture(t)
		b.Scopes()[0] = rec("x")
		checkUpdates(t, "after mutating what Scopes() returned", b)
	})
}

func TestCommitBatchKeepsEmptyHeadAHead(t *testing.T) {
	var nilHead []byte
	for _, head := range []*[]byte{hoststore.Ptr([]byte{}), &nilHead} {
		b, err := hoststore.NewCommitBatch("c", 1, ups(hoststore.ScopeUpdate{Scope: sess("s"), Next: 1, Head: head}))
		if err != nil {
			t.Fatalf("NewCommitBatch with an empty head = %q, want it accepted", err)
		}
		got := b.Updates()[0].Head
		if got == nil || len(*got) != 0 {
			t.Fatalf("Updates()[0].Head = %v, want a non-nil empty head (an empty head is a head)", got)
		}
	}
	b, err := hoststore.NewCommitBatch("c", 1, ups(advance(sess("s"), 1, nil, []byte("r"))))
	if err != nil {
		t.Fatalf("NewCommitBatch with a nil row = %q, want it accepted", err)
	}
	if rows := b.Updates()[0].Append; len(rows) != 2 || len(rows[0]) != 0 || string(rows[1]) != "r" {
		t.Fatalf("Updates()[0].Append = %q, want a zero-length row then \"r\"", rows)
	}
	b, err = hoststore.NewCommitBatch("c", 1, ups(advance(sess("s"), 1)))
	if err != nil {
		t.Fatalf("NewCommitBatch = %q, want it accepted", err)
	}
	if u := b.Updates()[0]; u.Head != nil || u.Append != nil || u.TruncateAfter != nil || u.DropBefore != nil {
		t.Fatalf("Updates()[0] = %+v, want unset parts to stay nil", u)
	}
}

func TestScopeUpdateCloneSharesNothing(t *testing.T) {
	u := wantCopied()[0]
	c := u.Clone()
	if !reflect.DeepEqual(c, u) {
		t.Fatalf("Clone() = %+v, want %+v", c, u)
	}
	(*c.Head)[0] = 'X'
	c.Append[0][0] = 'X'
	*c.Previous, *c.TruncateAfter, *c.DropBefore = 0, 0, 0
	if want := wantCopied()[0]; !reflect.DeepEqual(u, want) {
		t.Fatalf("after mutating the clone the original is %+v, want %+v", u, want)
	}
}
