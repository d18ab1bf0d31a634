package reference

import (
	"context"
	"reflect"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// listingOrder is the Session names of the listing realm in byte order of
// their names (written out, not computed): upper case before lower, a
// prefix before its extensions, ASCII before two-, then three-byte UTF-8.
var listingOrder = []hoststore.ScopeName{"Z", "a", "a b", "ab", "abc", "b", "z", "~", "é", "é2", "ア", "日本"}

// lister is ListHeads of either the Model or a Store.
type lister func(kind hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error)

// listingRealm builds the same realm in a Model and a Store: every name of
// listingOrder as a Session (in a scrambled order, over several batches),
// "a" and "ab" also as Mob scopes, and a deleted Session "deleted".
func listingRealm(t *testing.T) map[string]lister {
	m := NewModel()
	s, tok := fenced(t, NewFactory())
	apply := func(b *hoststore.CommitBatch) {
		mustApply(t, m, b)
		mustCommit(t, s, b)
	}
	scrambled := []int{7, 2, 11, 0, 9, 4, 1, 10, 3, 8, 6, 5}
	for i, at := range scrambled {
		n := string(listingOrder[at])
		apply(batch(t, "s-"+n, tok, create(sess(n), "head "+n)))
		if i == 3 {
			apply(batch(t, "mobs", tok, create(sc(hoststore.KindMob, "ab"), "mob ab"), create(sc(hoststore.KindMob, "a"), "mob a"), create(sess("deleted"), "d")))
			apply(batch(t, "del", tok, del(sess("deleted"), 1)))
		}
	}
	return map[string]lister{
		"model": m.ListHeads,
		"store": func(k hoststore.ScopeKind, after *hoststore.ScopeName, limit int) (hoststore.HeadPage, error) {
			return s.ListHeads(context.Background(), k, after, limit)
		},
	}
}

// TestListingPages pages through every kind with several limits and checks
// order, heads, Next and that the listing ends.
func TestListingPages(t *testing.T) {
	for name, list := range listingRealm(t) {
		t.Run(name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 7, 1000} {
				got := pageAll(t, list, hoststore.KindSession, limit)
				if !reflect.DeepEqual(got, listingOrder) {
					t.Fatalf("limit %d: Session names = %q, want %q", limit, got, listingOrder)
				}
				if got := pageAll(t, list, hoststore.KindMob, limit); !reflect.DeepEqual(got, []hoststore.ScopeName{"a", "ab"}) {
					t.Fatalf("limit %d: Mob names = %q, want [a ab]", limit, got)
				}
				if got := pageAll(t, list, hoststore.KindRecord, limit); len(got) != 0 {
					t.Fatalf("limit %d: Record names = %q, want none", limit, got)
				}
			}
			page, err := list(hoststore.KindMob, nil, 5)
			if err != nil {
				t.Fatal(err)
			}
			want := []hoststore.NamedHead{
				{Name: "a", Head: hoststore.VersionedHead{Version: 1, CommitID: "mobs", Head: []byte("mob a")}},
				{Name: "ab", Head: hoststore.VersionedHead{Version: 1, CommitID: "mobs", Head: []byte("mob ab")}},
			}
			if !reflect.DeepEqual(page.Heads, want) || page.Next != nil {
				t.Fatalf("Mob page = %+v, want %+v and no next", page, want)
			}
		})
	}
}

// pageAll reads a whole listing page by page and checks every page: full
// pages until the last, Next is the last name of a page that has more
// after it, nil on the last.
func pageAll(t *testing.T, list lister, kind hoststore.ScopeKind, limit int) []hoststore.ScopeName {
	t.Helper()
	var out []hoststore.ScopeName
	var after *hoststore.ScopeName
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("listing %s with limit %d did not end", kind, limit)
		}
		page, err := list(kind, after, limit)
		if err != nil {
			t.Fatalf("ListHeads(%s, %v, %d): %v", kind, after, limit, err)
		}
		if len(page.Heads) > limit {
			t.Fatalf("page of %d heads over limit %d", len(page.Heads), limit)
		}
		for _, h := range page.Heads {
			out = append(out, h.Name)
			if string(h.Head.Head) != "head "+string(h.Name) && kind == hoststore.KindSession {
				t.Fatalf("head of %q = %q", h.Name, h.Head.Head)
			}
		}
		if page.Next == nil {
			return out
		}
		if len(page.Heads) != limit || *page.Next != page.Heads[len(page.Heads)-1].Name {
			t.Fatalf("page %v with next %q: a continued page is full and names its last entry", names(page), *page.Next)
		}
		after = page.Next
	}
}

func names(p hoststore.HeadPage) []hoststore.ScopeName {
	var out []hoststore.ScopeName
	for _, h := range p.Heads {
		out = append(out, h.Name)
	}
	return out
}

// TestListingCursors covers cursors that are not listed names and
// malformed requests.
func TestListingCursors(t *testing.T) {
	n := func(s string) *hoststore.ScopeName { return hoststore.Ptr(hoststore.ScopeName(s)) }
	cases := []struct {
		name  string
		kind  hoststore.ScopeKind
		after *hoststore.ScopeName
		limit int
		want  []hoststore.ScopeName
		next  *hoststore.ScopeName
		err   hoststore.ErrorKind
	}{
		{"after a prefix starts at its extension", hoststore.KindSession, n("a"), 2, []hoststore.ScopeName{"a b", "ab"}, n("ab"), ""},
		{"after a name not listed", hoststore.KindSession, n("aa"), 2, []hoststore.ScopeName{"ab", "abc"}, n("abc"), ""},
		{"after a deleted name", hoststore.KindSession, n("deleted"), 3, []hoststore.ScopeName{"z", "~", "é"}, n("é"), ""},
		{"a page that reaches the end exactly ends", hoststore.KindSession, n("é2"), 2, []hoststore.ScopeName{"ア", "日本"}, nil, ""},
		{"after the last name", hoststore.KindSession, n("日本"), 5, nil, nil, ""},
		{"after beyond every name", hoststore.KindSession, n("\U0010FFFF"), 5, nil, nil, ""},
		{"the same name in another kind", hoststore.KindMob, n("a"), 5, []hoststore.ScopeName{"ab"}, nil, ""},
		{"zero limit", hoststore.KindSession, nil, 0, nil, nil, hoststore.ErrKindInvalid},
		{"negative limit", hoststore.KindSession, nil, -3, nil, nil, hoststore.ErrKindInvalid},
		{"not a kind", hoststore.ScopeKind(9), nil, 3, nil, nil, hoststore.ErrKindInvalid},
		{"an empty cursor", hoststore.KindSession, n(""), 3, nil, nil, hoststore.ErrKindInvalid},
	}
	for impl, list := range listingRealm(t) {
		for _, tc := range cases {
			t.Run(impl+"/"+tc.name, func(t *testing.T) {
				page, err := list(tc.kind, tc.after, tc.limit)
				wantKind(t, "ListHeads", err, tc.err)
				if got := names(page); !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(page.Next, tc.next) {
					t.Fatalf("page = %q next %v, want %q next %v", got, page.Next, tc.want, tc.next)
				}
			})
		}
	}
}
