package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/postgres"
)

// NewRealm makes a fresh, empty realm with a random id in the database a
// URL names, here the one in CONFORM_PG_URL (scripts/pg.sh starts a
// throwaway server and prints it). A handle acquires the fence, commits and
// loads back; Close deletes every row of the realm the factory made. The
// example needs a server, so it has no output to check.
func ExampleNewRealm() {
	ctx := context.Background()
	f, err := postgres.NewRealm(ctx, os.Getenv("CONFORM_PG_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil { // deletes the realm
			log.Print(err)
		}
	}()

	st, err := f.OpenStore(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	grant, err := st.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		log.Fatal(err)
	}
	scope := hoststore.ScopeRef{Kind: hoststore.KindSession, Name: "run-1"}
	batch, err := hoststore.NewCommitBatch("c-1", grant.Token, []hoststore.ScopeUpdate{{
		Scope: scope, Next: hoststore.FirstVersion, Head: hoststore.Ptr([]byte("started")),
	}})
	if err != nil {
		log.Fatal(err)
	}
	if err := st.Commit(ctx, batch); err != nil {
		log.Fatal(err)
	}
	head, err := st.LoadHead(ctx, scope)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("realm %s: %s at version %d\n", f.Realm(), scope, head.Version)
}

// OpenURL opens the realm the URL names, as the conform command does. With
// realm=NAME it serves that realm and Close leaves it in place; without
// one it makes a fresh realm that Close deletes.
func ExampleOpenURL() {
	ctx := context.Background()
	hf, err := postgres.OpenURL(ctx, "postgres://conform@localhost:5432/conform?sslmode=disable&realm=staging&fence_renew=5s&fence_lease=20s")
	if err != nil {
		log.Fatal(err)
	}
	f := hf.(*postgres.Factory)
	fmt.Println(f.Realm(), f.Owned(), f.FenceTiming())
	if err := f.Close(); err != nil { // the named realm stays
		log.Print(err)
	}
}
