package hoststore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/conform-spi/conform/hoststore"
)

// The writer's side: one batch that creates a session scope and moves a
// record scope on. A change that spans two scopes is one batch, so it lands
// in both or in neither.
func ExampleNewCommitBatch() {
	session := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "run-7"}
	record := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "continuation/abc"}

	batch, err := hoststore.NewCommitBatch("commit-0001", 3, []hoststore.ScopeUpdate{
		{
			Scope:  session,
			Next:   hoststore.FirstVersion, // Previous nil: the batch creates the scope
			Head:   hoststore.Ptr([]byte(`{"state":"new"}`)),
			Append: [][]byte{[]byte("event-0"), []byte("event-1")},
		},
		{
			Scope:         record,
			Previous:      hoststore.Ptr(hoststore.ScopeVersion(4)),
			Next:          5,
			TruncateAfter: hoststore.Ptr(hoststore.RowIndex(10)),
			Append:        [][]byte{[]byte("entry")},
		},
	})
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println(batch)
	for _, u := range batch.Updates() {
		fmt.Printf("%s creates=%t next=%d bytes=%d\n", u.Scope, u.Creates(), u.Next, u.Bytes())
	}
	// Output:
	// batch "commit-0001" token 3 scopes [Session/"run-7" Record/"continuation/abc"] (34 bytes)
	// Session/"run-7" creates=true next=1 bytes=29
	// Record/"continuation/abc" creates=false next=5 bytes=5
}

// NewCommitBatch names the rule a malformed batch breaks.
func ExampleNewCommitBatch_refused() {
	scope := hoststore.ScopeRef{Kind: hoststore.KindMob, Name: "mob-1"}
	for _, u := range []hoststore.ScopeUpdate{
		{Scope: scope, Next: 1}, // creates, but sets no head
		{Scope: scope, Previous: hoststore.Ptr(hoststore.ScopeVersion(2)), Next: 4}, // skips a version
		{Scope: scope, Previous: hoststore.Ptr(hoststore.ScopeVersion(2)), Next: 3, Delete: true, Append: [][]byte{{1}}},
		{Scope: scope, Next: 1, Head: hoststore.Ptr([]byte{}), Append: [][]byte{make([]byte, hoststore.MaxRowBytes+1)}},
	} {
		_, err := hoststore.NewCommitBatch("c-1", 1, []hoststore.ScopeUpdate{u})
		fmt.Println(err)
	}
	// Output:
	// batch "c-1": update of Mob/"mob-1": a creating update must set a head
	// batch "c-1": update of Mob/"mob-1": next is 4, not the one after previous 2
	// batch "c-1": update of Mob/"mob-1": a delete sets nothing else (Head, Append, TruncateAfter, DropBefore)
	// batch "c-1": update of Mob/"mob-1": appended row 0 is 1048577 bytes, over the row limit of 1048576
}

// A store's side: apply one update's parts in their fixed order,
// TruncateAfter, DropBefore, Append, Head, to a scope kept as rows by stable
// index (docs/host-store-contract.md#batches).
func Example_applyUpdate() {
	rows := map[hoststore.RowIndex][]byte{0: []byte("a"), 1: []byte("b"), 2: []byte("c"), 3: []byte("d")}
	end, head := hoststore.RowIndex(4), []byte("old")

	u := hoststore.ScopeUpdate{
		Scope:         hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "s"},
		Previous:      hoststore.Ptr(hoststore.ScopeVersion(1)),
		Next:          2,
		TruncateAfter: hoststore.Ptr(hoststore.RowIndex(3)), // removes index 3; the next row takes 3
		DropBefore:    hoststore.Ptr(hoststore.RowIndex(1)), // removes index 0; no renumbering
		Append:        [][]byte{[]byte("x"), []byte("y")},
		Head:          hoststore.Ptr([]byte("new")),
	}
	if u.TruncateAfter != nil && *u.TruncateAfter < end {
		for i := *u.TruncateAfter; i < end; i++ {
			delete(rows, i)
		}
		end = *u.TruncateAfter
	}
	if u.DropBefore != nil {
		for i := range rows {
			if i < *u.DropBefore {
				delete(rows, i)
			}
		}
	}
	for _, r := range u.Append {
		rows[end] = r
		end++
	}
	if u.Head != nil {
		head = *u.Head
	}
	for i := hoststore.RowIndex(0); i < end; i++ {
		if r, ok := rows[i]; ok {
			fmt.Printf("%d=%s ", i, r)
		}
	}
	fmt.Printf("end=%d head=%s\n", end, head)
	// Output: 1=b 2=c 3=x 4=y end=5 head=new
}

// The writer's side: match a store's error with errors.As to read its
// fields, through any wrapping the store added.
func ExampleConflictError() {
	commit := func() error { // a store's Commit, returning through its own wrapping
		return fmt.Errorf("postgres store: %w", &hoststore.ConflictError{
			Scope:   hoststore.ScopeRef{Kind: hoststore.KindIdentity, Name: "id-9"},
			Current: hoststore.Ptr(hoststore.ScopeVersion(12)),
		})
	}
	var conflict *hoststore.ConflictError
	if err := commit(); errors.As(err, &conflict) {
		fmt.Printf("%s is at version %d: nothing was applied\n", conflict.Scope, *conflict.Current)
	}
	// Output: Identity/"id-9" is at version 12: nothing was applied
}

// KindOf sorts any error into the six error types and three more kinds; the harness counts
// ErrKindOther as a breach of the error contract.
func ExampleKindOf() {
	for _, err := range []error{
		nil,
		&hoststore.FencedOutError{Current: 8},
		fmt.Errorf("commit: %w", &hoststore.IndeterminateError{Detail: "timeout after send"}),
		&hoststore.HeldError{Holder: 4, Remaining: 12 * time.Second},
		fmt.Errorf("load: %w", context.Canceled),
		errors.New("driver: bad connection"),
	} {
		fmt.Printf("%-15q %v\n", hoststore.KindOf(err), err)
	}
	// Output:
	// ""              <nil>
	// "FencedOut"     fenced out: token 8 is current
	// "Indeterminate" commit: indeterminate: timeout after send
	// "Held"          held: token 4 holds the fence for 12s more
	// "Context"       load: context canceled
	// "Other"         driver: bad connection
}

// A store whose writes can take up to 3 s to show to other clients declares
// a margin of one renew interval plus twice that lag, and a longest commit
// that fits its backend (docs/host-store-contract.md#fence-timing).
func ExampleNewFenceTimingWithMargin() {
	const renew, lag = 10 * time.Second, 3 * time.Second
	timing, err := hoststore.NewFenceTimingWithMargin(renew, 40*time.Second, renew+2*lag)
	if err == nil {
		timing, err = timing.WithMaxCommitLatency(5 * time.Second)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(timing)
	fmt.Println("self-fence window:", timing.SelfFenceWindow())

	_, err = hoststore.NewFenceTimingWithMargin(renew, 30*time.Second, renew+2*lag)
	fmt.Println(err)
	// Output:
	// renew 10s, lease 40s, margin 16s, longest commit 5s
	// self-fence window: 24s
	// fence timing: self-fence window 14s (lease 30s minus margin 16s) is below two renew intervals of 10s
}
