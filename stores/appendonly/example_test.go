package appendonly_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/appendonly"
)

// NewRealm makes an empty realm in a new file inside a directory. A handle
// acquires the fence and commits a batch; a second handle, a new process,
// resolves the log and loads the batch. Close removes the file the factory
// made.
func ExampleNewRealm() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "appendonly-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	f, err := appendonly.NewRealm(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
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
	scope := hoststore.ScopeRef{Kind: hoststore.KindRecord, Name: "settings"}
	batch, err := hoststore.NewCommitBatch("c-1", grant.Token, []hoststore.ScopeUpdate{{
		Scope: scope, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("v1")),
		Append: [][]byte{[]byte("a"), []byte("b")},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Commit(ctx, batch); err != nil {
		fmt.Println(err)
		return
	}
	st.(hoststore.Killer).Kill() // the first process dies

	again, err := f.OpenStore(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	head, err := again.LoadHead(ctx, scope)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := again.ReadRows(ctx, scope, 0, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s at version %d by %s: %s, %d rows\n", scope, head.Version, head.CommitID, head.Head, len(rows))
	if err := again.Close(); err != nil {
		fmt.Println(err)
	}

	path := f.Path()
	if err := f.Close(); err != nil {
		fmt.Println(err)
	}
	_, err = os.Stat(path)
	fmt.Println("file removed:", errors.Is(err, fs.ErrNotExist))
	// Output:
	// Record/"settings" at version 1 by c-1: v1, 2 rows
	// file removed: true
}
