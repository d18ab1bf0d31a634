package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/conform-spi/conform/hoststore"
	"github.com/conform-spi/conform/stores/postgres"
)

// settle is how long a test gives a call that must wait to answer anyway:
// a call that does not wait answers well within it.
const settle = 300 * time.Millisecond

// rawTx opens a connection of the test's own to the realm's database and
// begins a transaction on it, rolled back at the end of the test unless
// committed.
func rawTx(t *testing.T) pgx.Tx {
	t.Helper()
	c, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	tx, err := c.Begin(t.Context())
	if err != nil {
		t.Fatalf("BEGIN: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}

// background runs fn on its own goroutine; its answer comes on the channel.
func background(fn func() error) <-chan error {
	res := make(chan error, 1)
	go func() { res <- fn() }()
	return res
}

// waits fails the test unless res stays silent for settle, then waits for
// its answer (after the caller's release) and returns it.
func waits(t *testing.T, what, whileWhat string, res <-chan error) func() error {
	t.Helper()
	select {
	case err := <-res:
		t.Errorf("%s answered %v while %s; want it to wait", what, err, whileWhat)
		return func() error { return err }
	case <-time.After(settle):
	}
	return func() error {
		select {
		case err := <-res:
			return err
		case <-time.After(hangGuard):
			t.Fatalf("%s still waits %s after its release", what, hangGuard)
			return nil
		}
	}
}

// TestLapseAtomicWithAcquire plays an acquire's statements by hand and stops
// it after it read the live lease it supersedes, before it writes the new
// one; a lapse then must wait for it and lapse the new lease too: after
// both, an exclusive acquire is granted. (A lapse that did not wait moved the
// clock past the old lease only, and the new lease, written from the moved
// clock, survived it: the exclusive acquire answered Held.)
func TestLapseAtomicWithAcquire(t *testing.T) {
	f := newRealm(t)
	ctx := t.Context()
	lease := f.FenceTiming().Lease()
	if _, err := open(t, f).AcquireFence(ctx, hoststore.Exclusive); err != nil {
		t.Fatalf("AcquireFence(Exclusive): %v", err)
	}

	tx := rawTx(t)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, f.FenceLockKey()); err != nil {
		t.Fatalf("the fence lock: %v", err)
	}
	var (
		token  int64
		remain *int64
	)
	if err := tx.QueryRow(ctx, postgres.SQLFenceRead, f.Realm()).Scan(&token, &remain); err != nil {
		t.Fatalf("the acquire's read: %v", err)
	}
	if token != 1 || remain == nil || *remain <= 0 {
		t.Fatalf("the acquire read token %d, remaining %v µs; want token 1 with a live lease", token, remain)
	}

	lapse := waits(t, "LapseFenceLeases", "an acquire held the fence lock between its read and its write",
		background(func() error { return f.LapseFenceLeases(ctx) }))
	var issued int64
	if err := tx.QueryRow(ctx, postgres.SQLFenceIssue, f.Realm(), lease.Microseconds()).Scan(&issued); err != nil {
		t.Fatalf("the acquire's write: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("the acquire's COMMIT: %v", err)
	}
	if err := lapse(); err != nil {
		t.Fatalf("LapseFenceLeases: %v", err)
	}

	g, err := open(t, f).AcquireFence(ctx, hoststore.Exclusive)
	if err != nil || g.Token != hoststore.FenceToken(issued)+1 || g.SupersededLease != 0 {
		t.Errorf("AcquireFence(Exclusive) after the lapse = %+v, %v; want token %d, nothing superseded (the lapse came after token %d's lease was written)",
			g, err, issued+1, issued)
	}
}

// TestLapseAtomicWithRenew holds a lapse by hand between taking the fence
// lock and moving the clock: a renew must wait for it, then record a full
// lease from the moved clock, which an exclusive acquire meets as Held.
func TestLapseAtomicWithRenew(t *testing.T) {
	f := newRealm(t)
	ctx := t.Context()
	lease := f.FenceTiming().Lease()
	w := open(t, f)
	g, err := w.AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		t.Fatalf("AcquireFence(Exclusive): %v", err)
	}

	tx := rawTx(t)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, f.FenceLockKey()); err != nil {
		t.Fatalf("the fence lock: %v", err)
	}
	renew := waits(t, "RenewFence", "a lapse held the fence lock", background(func() error { return w.RenewFence(ctx, g.Token) }))
	if _, err := tx.Exec(ctx, postgres.SQLLapse, f.Realm()); err != nil {
		t.Fatalf("the lapse: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("the lapse's COMMIT: %v", err)
	}
	if err := renew(); err != nil {
		t.Fatalf("RenewFence: %v", err)
	}

	var held *hoststore.HeldError
	if _, err := open(t, f).AcquireFence(ctx, hoststore.Exclusive); !asHeld(err, &held) || held.Holder != g.Token || held.Remaining <= lease-lease/4 {
		t.Errorf("AcquireFence(Exclusive) after a renew that followed the lapse = %v; want Held{%d} with about a full lease (%s)", err, g.Token, lease)
	}
}

// TestLapseWaitsForRenewInFlight holds a renew by hand inside its
// transaction, after its UPDATE: a lapse must wait for it and then lapse the
// renewed lease.
func TestLapseWaitsForRenewInFlight(t *testing.T) {
	f := newRealm(t)
	ctx := t.Context()
	lease := f.FenceTiming().Lease()
	g, err := open(t, f).AcquireFence(ctx, hoststore.Exclusive)
	if err != nil {
		t.Fatalf("AcquireFence(Exclusive): %v", err)
	}

	tx := rawTx(t)
	if _, err := tx.Exec(ctx, postgres.SQLFenceShared, f.FenceLockKey()); err != nil {
		t.Fatalf("the fence lock (shared): %v", err)
	}
	if _, err := tx.Exec(ctx, postgres.SQLFenceRenew, f.Realm(), int64(g.Token), lease.Microseconds()); err != nil {
		t.Fatalf("the renew's UPDATE: %v", err)
	}
	lapse := waits(t, "LapseFenceLeases", "a renew held the fence lock in shared mode",
		background(func() error { return f.LapseFenceLeases(ctx) }))
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("the renew's COMMIT: %v", err)
	}
	if err := lapse(); err != nil {
		t.Fatalf("LapseFenceLeases: %v", err)
	}
	if g2, err := open(t, f).AcquireFence(ctx, hoststore.Exclusive); err != nil || g2.SupersededLease != 0 {
		t.Errorf("AcquireFence(Exclusive) after the lapse = %+v, %v; want a grant, nothing superseded", g2, err)
	}
}
