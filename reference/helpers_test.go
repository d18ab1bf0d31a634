package reference

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// sc names a scope of kind k.
func sc(k hoststore.ScopeKind, name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: k, Name: hoststore.ScopeName(name)}
}

// sess names a Session scope.
func sess(name string) hoststore.ScopeRef { return sc(hoststore.KindSession, name) }

// rowsOf makes rows from strings.
func rowsOf(data ...string) [][]byte {
	out := make([][]byte, len(data))
	for i, d := range data {
		out[i] = []byte(d)
	}
	return out
}

// create is an update creating s with head and rows.
func create(s hoststore.ScopeRef, head string, rows ...string) hoststore.ScopeUpdate {
	h := []byte(head)
	return hoststore.ScopeUpdate{Scope: s, Next: hoststore.FirstVersion, Head: &h, Append: rowsOf(rows...)}
}

// step is an update moving s from version prev to prev+1; change sets the parts.
func step(s hoststore.ScopeRef, prev hoststore.ScopeVersion, change func(*hoststore.ScopeUpdate)) hoststore.ScopeUpdate {
	u := hoststore.ScopeUpdate{Scope: s, Previous: hoststore.Ptr(prev), Next: prev + 1}
	if change != nil {
		change(&u)
	}
	return u
}

// del is an update deleting s at version prev.
func del(s hoststore.ScopeRef, prev hoststore.ScopeVersion) hoststore.ScopeUpdate {
	return step(s, prev, func(u *hoststore.ScopeUpdate) { u.Delete = true })
}

// batch builds a batch or fails the test.
func batch(t testing.TB, id string, token hoststore.FenceToken, ups ...hoststore.ScopeUpdate) *hoststore.CommitBatch {
	t.Helper()
	b, err := hoststore.NewCommitBatch(hoststore.CommitID(id), token, ups)
	if err != nil {
		t.Fatalf("NewCommitBatch(%q): %v", id, err)
	}
	return b
}

// wantKind fails unless err is of kind want.
func wantKind(t testing.TB, what string, err error, want hoststore.ErrorKind) {
	t.Helper()
	if got := hoststore.KindOf(err); got != want {
		t.Fatalf("%s = %v (kind %q), want kind %q", what, err, got, want)
	}
}

// rowStrings renders rows as "index:data" for comparisons.
func rowStrings(rows []hoststore.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%d:%s", r.Index, r.Data)
	}
	return out
}

// openStore opens a handle over f or fails the test.
func openStore(t testing.TB, f *Factory) *Store {
	t.Helper()
	h, err := f.Open(context.Background())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return h.(*Store)
}

// fenced opens a handle and acquires the fence exclusively.
func fenced(t testing.TB, f *Factory) (*Store, hoststore.FenceToken) {
	t.Helper()
	s := openStore(t, f)
	g, err := s.AcquireFence(context.Background(), hoststore.Takeover)
	if err != nil {
		t.Fatalf("AcquireFence: %v", err)
	}
	return s, g.Token
}

// mustCommit commits b on s or fails the test.
func mustCommit(t testing.TB, s *Store, b *hoststore.CommitBatch) {
	t.Helper()
	if err := s.Commit(context.Background(), b); err != nil {
		t.Fatalf("Commit(%s) = %v, want nil", b, err)
	}
}

// mustApply applies b to m or fails the test.
func mustApply(t testing.TB, m *Model, b *hoststore.CommitBatch) {
	t.Helper()
	if err := m.Apply(b); err != nil {
		t.Fatalf("Apply(%s) = %v, want nil", b, err)
	}
}

// headOf loads s's head on st or fails the test.
func headOf(t testing.TB, st *Store, s hoststore.ScopeRef) *hoststore.VersionedHead {
	t.Helper()
	h, err := st.LoadHead(context.Background(), s)
	if err != nil {
		t.Fatalf("LoadHead(%s): %v", s, err)
	}
	return h
}

// wantHead fails unless h is version v written by id with head bytes head;
// v == 0 wants no head.
func wantHead(t testing.TB, what string, h *hoststore.VersionedHead, v hoststore.ScopeVersion, id, head string) {
	t.Helper()
	if v == 0 {
		if h != nil {
			t.Fatalf("%s = %+v, want no head", what, *h)
		}
		return
	}
	want := hoststore.VersionedHead{Version: v, CommitID: hoststore.CommitID(id), Head: []byte(head)}
	if h == nil || !reflect.DeepEqual(*h, want) {
		t.Fatalf("%s = %v, want %+v", what, fmtHead(h), want)
	}
}

func fmtHead(h *hoststore.VersionedHead) string {
	if h == nil {
		return "nil"
	}
	return fmt.Sprintf("{v%d %q %q}", h.Version, h.CommitID, h.Head)
}

// asConflict returns err as a ConflictError or fails the test.
func asConflict(t testing.TB, err error) *hoststore.ConflictError {
	t.Helper()
	var c *hoststore.ConflictError
	if !errors.As(err, &c) {
		t.Fatalf("err = %v, want a ConflictError", err)
	}
	return c
}
