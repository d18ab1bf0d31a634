package hoststore_test

import (
	"math"
	"strings"
	"testing"

	"github.com/conform-spi/conform/hoststore"
)

// zeros backs every large head and row in these tests; NewCommitBatch copies
// what it keeps, so sharing one buffer is safe and keeps the tests light.
var zeros = make([]byte, hoststore.MaxBatchBytes+1)

func bytesOf(n int) []byte { return zeros[:n:n] }

func sess(name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: hoststore.KindSession, Name: hoststore.ScopeName(name)}
}

func rec(name string) hoststore.ScopeRef {
	return hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: hoststore.ScopeName(name)}
}

// create is a well-formed creating update with the given head and rows.
func create(s hoststore.ScopeRef, head []byte, rows ...[]byte) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: s, Next: hoststore.FirstVersion, Head: &head, Append: rows}
}

// advance is a well-formed update from version prev that appends rows.
func advance(s hoststore.ScopeRef, prev hoststore.ScopeVersion, rows ...[]byte) hoststore.ScopeUpdate {
	return hoststore.ScopeUpdate{Scope: s, Previous: hoststore.Ptr(prev), Next: prev + 1, Append: rows}
}

// with applies f to a copy of u, to derive a malformed update from a good one.
func with(u hoststore.ScopeUpdate, f func(*hoststore.ScopeUpdate)) hoststore.ScopeUpdate {
	f(&u)
	return u
}

func ups(us ...hoststore.ScopeUpdate) []hoststore.ScopeUpdate { return us }

// batchCase is one row: a batch to build, and either the distinctive
// substring of the rule it breaks or, when it passes, its Bytes().
type batchCase struct {
	name      string
	id        hoststore.CommitID
	updates   []hoststore.ScopeUpdate
	wantErr   string
	wantBytes int
}

// Distinctive substrings, one per rule of "Batches" and "Limits".
const (
	ruleNoUpdate      = "a batch needs at least one update"
	ruleTwoUpdates    = "two updates of one scope"
	ruleBadKind       = "is not a kind"
	ruleCreateHead    = "a creating update must set a head"
	ruleCreateRemoves = "a creating update removes no rows"
	ruleCreateDelete  = "a creating update cannot delete"
	ruleCreateNext    = "not the first version 1"
	ruleNextAfterPrev = "not the one after previous"
	rulePrevBelow     = "is below the first version 1"
	ruleDeleteAlone   = "a delete sets nothing else"
	ruleRowLimit      = "over the row limit of 1048576"
	ruleBatchLimit    = "over the batch limit of 8388608"
)

func TestNewCommitBatchRules(t *testing.T) {
	s, r := sess("s"), rec("r")
	bad := func(name string) hoststore.ScopeUpdate { return create(sess(name), []byte("h")) }
	cases := []batchCase{
		{name: "no update (nil)", updates: nil, wantErr: ruleNoUpdate},
		{name: "no update (empty)", updates: ups(), wantErr: ruleNoUpdate},
		{name: "one create", updates: ups(create(s, []byte("head"), []byte("r0"))), wantBytes: 6},
		{name: "two updates of one scope", updates: ups(create(s, []byte("a")), advance(s, 1)), wantErr: ruleTwoUpdates},
		{name: "two identical creates", updates: ups(create(s, nil), create(s, nil)), wantErr: ruleTwoUpdates},
		{name: "one name in two kinds", updates: ups(create(sess("x"), []byte("a")), create(rec("x"), []byte("bc"))), wantBytes: 3},
		{name: "one name in all four kinds", updates: func() []hoststore.ScopeUpdate {
			var us []hoststore.ScopeUpdate
			for _, k := range hoststore.AllKinds {
				us = append(us, create(hoststore.ScopeRef{Kind: k, Name: "x"}, []byte("h")))
			}
			return us
		}(), wantBytes: 4},
		{name: "kind 0", updates: ups(create(hoststore.ScopeRef{Kind: 0, Name: "x"}, nil)), wantErr: "scope kind 0 " + ruleBadKind},
		{name: "kind 5", updates: ups(create(hoststore.ScopeRef{Kind: 5, Name: "x"}, nil)), wantErr: "scope kind 5 " + ruleBadKind},
		{name: "bad kind in a later update", updates: ups(create(s, nil), create(hoststore.ScopeRef{Kind: 9, Name: "x"}, nil)), wantErr: ruleBadKind},
		{name: "empty name", updates: ups(bad("")), wantErr: "scope name is empty"},
		{name: "name over 512 bytes", updates: ups(bad(strings.Repeat("n", 513))), wantErr: "scope name is 513 bytes, over the limit of 512"},
		{name: "name of exactly 512 bytes", updates: ups(bad(strings.Repeat("n", 512))), wantBytes: 1},
		{name: "name with a control", updates: ups(bad("a\u0085")), wantErr: "scope name has a control character U+0085"},
		{name: "name not UTF-8", updates: ups(bad("a\xff")), wantErr: "scope name is not valid UTF-8"},
		{name: "empty commit id", id: "-", updates: ups(create(s, nil)), wantErr: "commit id is empty"},
		{name: "commit id over 128 bytes", id: hoststore.CommitID(strings.Repeat("c", 129)), updates: ups(create(s, nil)), wantErr: "commit id is 129 bytes, over the limit of 128"},
		{name: "commit id of exactly 128 bytes", id: hoststore.CommitID(strings.Repeat("c", 128)), updates: ups(create(s, nil)), wantBytes: 0},
		{name: "commit id with DEL", id: "c\x7f", updates: ups(create(s, nil)), wantErr: "commit id has a control character U+007F"},
		{name: "commit id not UTF-8", id: "c\xe2\x82", updates: ups(create(s, nil)), wantErr: "commit id is not valid UTF-8"},
		{name: "create without head", updates: ups(with(create(s, nil), func(u *hoststore.ScopeUpdate) { u.Head = nil })), wantErr: ruleCreateHead},
		{name: "create with empty non-nil head", updates: ups(create(s, []byte{})), wantBytes: 0},
		{name: "create with a pointer to a nil head", updates: ups(create(s, nil)), wantBytes: 0},
		{name: "create with rows", updates: ups(create(s, []byte("h"), []byte("r0"), []byte{}, []byte("r2"))), wantBytes: 5},
		{name: "create with TruncateAfter", updates: ups(with(create(s, nil), func(u *hoststore.ScopeUpdate) { u.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(0)) })), wantErr: ruleCreateRemoves},
		{name: "create with DropBefore", updates: ups(with(create(s, nil), func(u *hoststore.ScopeUpdate) { u.DropBefore = hoststore.Ptr(hoststore.RowIndex(0)) })), wantErr: ruleCreateRemoves},
		{name: "create with Delete", updates: ups(with(create(s, nil), func(u *hoststore.ScopeUpdate) { u.Delete = true })), wantErr: ruleCreateDelete},
		{name: "create with Next 0", updates: ups(with(create(s, nil), func(u *hoststore.ScopeUpdate) { u.Next = 0 })), wantErr: "creating update's next is 0, " + ruleCreateNext},
		{name: "create with Next 2", updates: ups(with(create(s, nil), func(u *hoststore.ScopeUpdate) { u.Next = 2 })), wantErr: "creating update's next is 2, " + ruleCreateNext},
		{name: "update from 1 to 2", updates: ups(advance(s, 1, []byte("x"))), wantBytes: 1},
		{name: "update with Next = Previous", updates: ups(with(advance(s, 4), func(u *hoststore.ScopeUpdate) { u.Next = 4 })), wantErr: "next is 4, " + ruleNextAfterPrev + " 4"},
		{name: "update with Next = Previous+2", updates: ups(with(advance(s, 4), func(u *hoststore.ScopeUpdate) { u.Next = 6 })), wantErr: "next is 6, " + ruleNextAfterPrev + " 4"},
		{name: "update with Next = Previous-1", updates: ups(with(advance(s, 4), func(u *hoststore.ScopeUpdate) { u.Next = 3 })), wantErr: ruleNextAfterPrev},
		{name: "update with Previous 0", updates: ups(with(advance(s, 0), func(u *hoststore.ScopeUpdate) { u.Next = 1 })), wantErr: "previous version 0 " + rulePrevBelow},
		{name: "update with Previous max-1", updates: ups(advance(s, math.MaxUint64-1)), wantBytes: 0},
		{name: "update with Previous max, Next wrapped to 0", updates: ups(advance(s, math.MaxUint64)), wantErr: ruleNextAfterPrev + " 18446744073709551615"},
		{name: "update with Previous max, Next max", updates: ups(with(advance(s, math.MaxUint64), func(u *hoststore.ScopeUpdate) { u.Next = math.MaxUint64 })), wantErr: ruleNextAfterPrev},
		{name: "update with every part", updates: ups(with(advance(s, 2, []byte("ab")), func(u *hoststore.ScopeUpdate) {
			u.Head = hoststore.Ptr([]byte("head"))
			u.TruncateAfter = hoststore.Ptr(hoststore.RowIndex(7))
			u.DropBefore = hoststore.Ptr(hoststore.RowIndex(3))
		})), wantBytes: 6},
		{name: "plain delete", updates: ups(with(advance(s, 3), func(u *hoststore.ScopeUpdate) { u.Delete = true })), wantBytes: 0},
		{name: "delete with empty non-nil Append", updates: ups(with(advance(s, 3), func(u *hoststore.ScopeUpdate) { u.Delete, u.Append = true, [][]byte{} })), wantBytes: 0},
		{name: "delete with head", updates: ups(with(advance(s, 3), func(u *hoststore.ScopeUpdate) { u.Delete, u.Head = true, hoststore.Ptr([]byte{}) })), wantErr: ruleDeleteAlone},
		{name: "delete with append", updates: ups(with(advance(s, 3, []byte{}), func(u *hoststore.ScopeUpdate) { u.Delete = true })), wantErr: ruleDeleteAlone},
		{name: "delete with truncate", updates: ups(with(advance(s, 3), func(u *hoststore.ScopeUpdate) {
			u.Delete, u.TruncateAfter = true, hoststore.Ptr(hoststore.RowIndex(0))
		})), wantErr: ruleDeleteAlone},
		{name: "delete with drop", updates: ups(with(advance(s, 3), func(u *hoststore.ScopeUpdate) {
			u.Delete, u.DropBefore = true, hoststore.Ptr(hoststore.RowIndex(0))
		})), wantErr: ruleDeleteAlone},
		{name: "delete with bad Next", updates: ups(with(advance(s, 3), func(u *hoststore.ScopeUpdate) { u.Delete, u.Next = true, 3 })), wantErr: ruleNextAfterPrev},
		{name: "delete beside a create of another scope", updates: ups(create(r, []byte("h")), with(advance(s, 3), func(u *hoststore.ScopeUpdate) { u.Delete = true })), wantBytes: 1},
		{name: "row of exactly MaxRowBytes", updates: ups(create(s, nil, bytesOf(hoststore.MaxRowBytes))), wantBytes: hoststore.MaxRowBytes},
		{name: "row of MaxRowBytes+1", updates: ups(create(s, nil, bytesOf(hoststore.MaxRowBytes+1))), wantErr: "appended row 0 is 1048577 bytes, " + ruleRowLimit},
		{name: "later row of MaxRowBytes+1", updates: ups(advance(s, 1, []byte("a"), bytesOf(hoststore.MaxRowBytes+1))), wantErr: "appended row 1 is 1048577 bytes, " + ruleRowLimit},
		// One row is bounded at 1 MiB (docs/host-store-contract.md#limits);
		// a head counts only toward the batch's 8 MiB of heads and rows.
		{name: "head over MaxRowBytes", updates: ups(create(s, bytesOf(2*hoststore.MaxRowBytes))), wantBytes: 2 * hoststore.MaxRowBytes},
		{name: "batch of exactly MaxBatchBytes", updates: fullBatch(0), wantBytes: hoststore.MaxBatchBytes},
		{name: "batch of MaxBatchBytes+1", updates: fullBatch(1), wantErr: "8388609 bytes of heads and rows, " + ruleBatchLimit},
		{name: "one head of exactly MaxBatchBytes", updates: ups(create(s, bytesOf(hoststore.MaxBatchBytes))), wantBytes: hoststore.MaxBatchBytes},
		{name: "one head of MaxBatchBytes+1", updates: ups(create(s, bytesOf(hoststore.MaxBatchBytes+1))), wantErr: ruleBatchLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runBatchCase(t, tc) })
	}
}

// fullBatch spreads MaxBatchBytes+extra bytes of heads and rows over three
// updates in two kinds, no row over MaxRowBytes.
func fullBatch(extra int) []hoststore.ScopeUpdate {
	const mib, half = hoststore.MaxRowBytes, hoststore.MaxRowBytes / 2
	a := create(sess("a"), bytesOf(half), bytesOf(mib), bytesOf(mib), bytesOf(mib)) // 3.5 MiB
	b := advance(rec("b"), 7, bytesOf(mib), bytesOf(mib))                           // 2 MiB
	b.Head = hoststore.Ptr(bytesOf(half))                                           // + 0.5 MiB
	c := create(rec("c"), bytesOf(mib-3), bytesOf(mib), bytesOf(3+extra))           // 2 MiB + extra
	return ups(a, b, c)
}

func runBatchCase(t *testing.T, tc batchCase) {
	t.Helper()
	id := tc.id
	switch id {
	case "":
		id = "commit-1"
	case "-":
		id = ""
	}
	b, err := hoststore.NewCommitBatch(id, 42, tc.updates)
	if tc.wantErr != "" {
		if err == nil {
			t.Fatalf("NewCommitBatch accepted %s, want an error containing %q", b, tc.wantErr)
		}
		if !strings.Contains(err.Error(), tc.wantErr) {
			t.Fatalf("NewCommitBatch = %q, want it to contain %q", err, tc.wantErr)
		}
		if b != nil {
			t.Fatalf("NewCommitBatch refused with %q but answered a batch %s", err, b)
		}
		return
	}
	if err != nil {
		t.Fatalf("NewCommitBatch = %q, want the batch accepted", err)
	}
	if got := b.Bytes(); got != tc.wantBytes {
		t.Errorf("Bytes() = %d, want %d", got, tc.wantBytes)
	}
	sum := 0
	for _, u := range tc.updates {
		sum += u.Bytes()
	}
	if sum != tc.wantBytes {
		t.Errorf("sum of ScopeUpdate.Bytes() = %d, want %d", sum, tc.wantBytes)
	}
	if b.CommitID() != id || b.Token() != 42 {
		t.Errorf("CommitID(), Token() = %q, %d, want %q, 42", b.CommitID(), b.Token(), id)
	}
	if b.Len() != len(tc.updates) || len(b.Updates()) != len(tc.updates) {
		t.Errorf("Len() = %d, len(Updates()) = %d, want %d", b.Len(), len(b.Updates()), len(tc.updates))
	}
	for i, sc := range b.Scopes() {
		if sc != tc.updates[i].Scope {
			t.Errorf("Scopes()[%d] = %v, want %v (the order of the updates)", i, sc, tc.updates[i].Scope)
		}
	}
}

func TestScopeUpdateCreates(t *testing.T) {
	if !create(sess("s"), nil).Creates() {
		t.Error("Creates() = false for an update with no Previous, want true")
	}
	if advance(sess("s"), 1).Creates() {
		t.Error("Creates() = true for an update with a Previous, want false")
	}
}
