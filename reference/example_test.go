package reference_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/reference"
)

// A Factory is one realm in memory. A handle acquires the fence, commits a
// batch over two scopes with the token it got, and a second handle, a new
// process, loads what landed.
func ExampleFactory() {
	ctx := context.Background()
	f := reference.NewFactory()

	st, err := f.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	grant, err := st.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		fmt.Println(err)
		return
	}
	session := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "run-1"}
	record := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "index"}
	batch, err := hoststore.NewCommitBatch("c-1", grant.Token, []hoststore.ScopeUpdate{
		{Scope: session, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("started")),
			Append: [][]byte{[]byte("event 0"), []byte("event 1")}},
		{Scope: record, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("run-1"))},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Commit(ctx, batch); err != nil {
		fmt.Println(err)
		return
	}

	again, err := f.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	head, err := again.LoadHead(ctx, session)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("token %d: %s at version %d by %s: %s\n", grant.Token, session, head.Version, head.CommitID, head.Head)
	rows, err := again.ReadRows(ctx, session, 0, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("row %d: %s\n", r.Index, r.Data)
	}
	// Output:
	// token 1: Session/"run-1" at version 1 by c-1: started
	// row 0: event 0
	// row 1: event 1
}

// While one handle's lease is live, an exclusive acquire from another
// handle is refused with *hoststore.HeldError. LapseFenceLeases ends the
// lease at once, as a test wants, and the next acquire gets a higher token.
func ExampleFactory_LapseFenceLeases() {
	ctx := context.Background()
	f := reference.NewFactory()
	first, _ := f.Open(ctx)
	second, _ := f.Open(ctx)

	if _, err := first.AcquireFence(ctx, hoststore.Exclusive); err != nil {
		fmt.Println(err)
		return
	}
	_, err := second.AcquireFence(ctx, hoststore.Exclusive)
	var held *hoststore.HeldError
	if errors.As(err, &held) {
		fmt.Printf("held by token %d for %s\n", held.Holder, held.Remaining)
	}

	if err := f.LapseFenceLeases(ctx); err != nil {
		fmt.Println(err)
		return
	}
	grant, err := second.AcquireFence(ctx, hoststore.Exclusive)
	fmt.Println(grant.Token, grant.SupersededLease, err)
	// Output:
	// held by token 1 for 30s
	// 2 0s <nil>
}

// A Model applies accepted batches without fences or clocks and returns
// what a correct store shows. A test can compare a store's answers with it.
func ExampleModel() {
	m := reference.NewModel()
	s := hoststore.ScopeRef{Kind: hoststore.KindMob, Name: "m"}
	create, _ := hoststore.NewCommitBatch("c-1", 1, []hoststore.ScopeUpdate{{
		Scope: s, Next: 1, Head: hoststore.Ptr([]byte("h1")),
		Append: [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")},
	}})
	drop, _ := hoststore.NewCommitBatch("c-2", 1, []hoststore.ScopeUpdate{{
		Scope: s, Previous: hoststore.Ptr(hoststore.ScopeVersion(1)), Next: 2,
		DropBefore: hoststore.Ptr(hoststore.RowIndex(2)), Append: [][]byte{[]byte("e")},
	}})
	stale, _ := hoststore.NewCommitBatch("c-3", 1, []hoststore.ScopeUpdate{{
		Scope: s, Previous: hoststore.Ptr(hoststore.ScopeVersion(1)), Next: 2,
		Head: hoststore.Ptr([]byte("late")),
	}})
	for _, b := range []*hoststore.CommitBatch{create, drop, stale, drop} {
		fmt.Printf("%s: %v\n", b.CommitID(), m.Apply(b))
	}
	start, end, _ := m.Bounds(s)
	rows, _ := m.ReadRows(s, start, 10)
	fmt.Printf("rows [%d, %d):", start, end)
	for _, r := range rows {
		fmt.Printf(" %d=%s", r.Index, r.Data)
	}
	fmt.Println()
	// Output:
	// c-1: <nil>
	// c-2: <nil>
	// c-3: conflict: scope Mob/"m" is version 2
	// c-2: <nil>
	// rows [2, 5): 2=c 3=d 4=e
}
