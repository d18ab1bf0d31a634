// Package postgres provides a host store that keeps realms in a PostgreSQL
// database, many realms side by side. Use it to run a realm on a shared
// server, or as a worked example of a transactional store on a database
// with row locks (docs/host-store-contract.md#in-store-failpoints).
//
// Each batch commits in one transaction. The transaction compares every
// update's Previous with the stored version and the batch's token with the
// realm's highest, and refuses with *hoststore.ConflictError or
// *hoststore.FencedOutError, so obligations 4 and 5 hold at commit. It
// records the commit id next to the versions, so that sending a landed
// batch again returns nil. The realm's highest token and its holder's
// lease expiry, measured on the database's clock, sit in a table of their
// own. The store uses only the
// public API of conform (hoststore, and instore.At for the three in-store
// failpoints), as a third party would.
//
// # Layout
//
// Several realms live side by side in one database: the realm id is a key
// column of five shared tables, created once (CREATE TABLE IF NOT EXISTS
// under an advisory lock, so concurrent first uses never race):
//
//   - conform_realms (realm, clock_offset): the realm's clock offset, which
//     LapseFenceLeases moves and every lease reading adds to the database
//     clock ("now" for leases is clock_timestamp() + clock_offset);
//   - conform_fences (realm, token, lease_until): the highest token issued
//     and its holder's lease expiry, a row of its own;
//   - conform_scopes (realm, kind, name bytea, version, commit_id, head,
//     deleted, row_start, row_end): each scope's head, version, the commit id
//     that wrote it, and its visible rows [row_start, row_end); a deleted
//     scope keeps a tombstone (deleted = true), so that a create of its name
//     is refused as *InvalidError;
//   - conform_rows (realm, kind, name, idx, data): rows, keyed by their stable
//     index; TruncateAfter, DropBefore and Delete remove rows in the same
//     transaction as their batch (obligation 6);
//   - conform_commits (realm, commit_id, token): every landed commit id.
//
// A realm the factory made (NewRealm, or OpenURL without realm) is deleted
// by Factory.Close: every row of it, in one transaction, after the handles
// still open are killed. A realm the caller named stays.
//
// Names are bytea, so indexes and ORDER BY compare them byte by byte, the
// order ListHeads must follow (docs/host-store-contract.md#op-list-heads);
// no locale collation is involved anywhere.
//
// # Commit point, fencing and independence
//
// A commit's commit point is its COMMIT. Commits run at READ COMMITTED and
// lock only their own scope rows (SELECT ... FOR UPDATE, in (kind, name)
// order, so two batches never deadlock on them). They read the fence row
// with no row lock. Fencing (docs/host-store-contract.md#ob-5: a stale
// batch whose commit point follows an acquire stays invisible, a batch
// whose commit point precedes it stays visible) rests on one advisory lock
// per realm, the fence lock:
//
//   - AcquireFence takes it in exclusive mode (pg_advisory_xact_lock) for its
//     whole transaction: it reads the fence row, issues token+1, COMMITs;
//   - every commit, in its last round trip, takes it in shared mode
//     (pg_advisory_xact_lock_shared), then checks in a new statement (a new
//     snapshot) that its token still is the highest, then COMMITs. The check
//     fails the statement, which aborts the transaction and skips the COMMIT
//     queued after it; the commit returns *FencedOutError.
//
// Why this is sound. Locks are released only after the transaction's commit
// is visible to new snapshots. If an acquire A holds the lock first, a
// commit C's shared request waits until A committed; C's check then sees A's
// token and C is refused: its commit point would have come after A. If C
// holds the lock first, A waits until C committed: C's commit point came
// before A, and it stays visible to every load after A. The two cannot
// interleave otherwise, since exclusive and shared modes conflict. Ties do
// not arise: the lock totally orders each commit against each acquire.
//
// Why it is not a realm-wide lock on the commit path
// (docs/host-store-contract.md#ob-8). The shared mode never conflicts with
// itself, so commits never wait for each other on it, only for an acquire,
// which is short and off the hot path. It is held only from the start of the
// last round trip to the end of COMMIT: never across a client round trip, and
// never while a commit is held at a failpoint (CommitLocked and
// CommitBeforePoint come before it is taken, CommitAfterPoint after it is
// released). So a commit held in flight holds up neither another scope's
// commit, nor an acquire, nor a renew (which takes the lock in shared mode
// and updates the fence row, which commits never lock), nor a load or
// listing (single statements over committed data, no locks). This is why
// the fence row itself is not locked by commits:
// SELECT ... FOR SHARE on it at the start would make a takeover's UPDATE wait
// for every commit in flight, held ones included, and SELECT ... FOR KEY SHARE
// would not conflict with the UPDATE at all (a non-key update takes FOR NO KEY
// UPDATE), so it would not order C against A. A row share lock is also written
// into the tuple (a MultiXact with many commits), a write on every commit; the
// advisory lock lives in the lock manager only.
//
// The early token check right after the scope locks is only a fast refusal:
// correctness rests on the check under the fence lock.
//
// The same lock makes LapseFenceLeases one step with respect to the lease
// operations. The lapse takes it exclusively, then reads the recorded lease
// and moves the realm's clock in a later statement; RenewFence takes it in
// shared mode (so it never waits for a commit) before its UPDATE. So an
// acquire or a renew either committed before the lapse reads the lease, and
// its lease runs out, or reads the clock only after the lapse committed: a
// lapse can no longer land between an acquire reading the old lease and
// writing the new one, which then survived it.
//
// Idempotent retry (docs/host-store-contract.md#ob-3): the commit id is looked
// up after the scope rows are locked, so a retry racing its first send waits
// for it and then sees it. A concurrent create of the same scope or a
// concurrent send of the same commit id that loses the race meets a unique
// violation; nothing was applied, and the transaction simply runs again and
// sees the winner.
//
// # Failpoints
//
// instore.CommitLocked sits right after the scope rows are locked (the first
// round trip: BEGIN, the locks, the commit-id and token reads);
// instore.CommitBeforePoint just before the last round trip (writes, commit
// record, fence check, COMMIT) is sent; instore.CommitAfterPoint just after
// COMMIT returned. On an error from one, the commit returns it at once and
// its connection is closed without a graceful step (the server aborts the
// transaction; after the point the batch stays applied).
//
// # Errors
//
// Before the last round trip is sent nothing is applied: a broken or
// killed connection or a server error is *UnavailableError, the caller's
// context ending ctx.Err(). A server error reply within the last round trip
// applies nothing either. A lost answer to it (the connection broke, the
// handle was killed, the context ended while COMMIT was in flight) is
// *IndeterminateError: the batch may have landed. The writer settles it by
// loading the head or sending the batch again.
//
// Durability (docs/host-store-contract.md#ob-2) is the server's: a commit
// returns nil once the server acknowledged its COMMIT, which with PostgreSQL's
// defaults (synchronous_commit = on, fsync = on) means flushed to disk. The
// throwaway test server of scripts/pg.sh turns fsync off for speed; that
// changes nothing the tests can observe, since they never crash the server.
//
// # Handles and kills
//
// Every Factory.Open is a new handle with a connection pool of its own. Kill
// closes every socket of the handle at once (no Terminate, no ROLLBACK);
// the server aborts the transactions left open. LapseFenceLeases moves the
// realm's clock offset just past the recorded lease's expiry, so no test
// sleeps through a lease.
//
// # URL
//
//	postgres://USER@HOST:PORT/DB?sslmode=disable&realm=NAME[&pool_max_conns=N][&fence_renew=10s&fence_lease=30s]
//
// The store's parameters are removed before connecting; see OpenURL.
// Tests read CONFORM_PG_URL (a URL without realm; scripts/pg.sh starts a
// throwaway server and prints it) and make a fresh realm per test.
package postgres
