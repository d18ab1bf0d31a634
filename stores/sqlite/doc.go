// Package sqlite provides a host store that keeps each realm in one local
// SQLite file. Use it to run a realm on one machine, to run conform without
// a server, or as a worked example of a transactional store on an engine
// with one write lock (docs/host-store-contract.md#in-store-failpoints).
//
// It is built on modernc.org/sqlite (pure Go, driver name "sqlite") and on
// the public API of conform only (package hoststore, and instore.At for the
// three in-store failpoints), as a third party would write it.
//
// # Realm, handles and URL
//
// A realm is one database file. The URL form is
//
//	sqlite:PATH
//
// where PATH names the file (created with its schema when absent; a
// certifying run wants a path that does not exist yet, since a realm starts
// empty); NewRealm makes such a file in a directory and removes it on
// Close. Every Factory.Open is a new process: a new pair of *sql.DB pools
// over the same file, sharing no state with earlier handles. The file runs
// in journal_mode=WAL with synchronous=FULL (a commit that returned nil
// survives a crash of the process and of the machine), and busy_timeout
// makes a connection wait for SQLite's write lock rather than fail at once.
//
// # Commit
//
// Each batch commits in one short BEGIN IMMEDIATE … COMMIT transaction. In
// it the store looks up the commit id (table commits), compares the batch's
// token with the fence row and each update's Previous with the stored
// version, applies every update and records the commit id. A wrong version
// returns *hoststore.ConflictError and a stale token
// *hoststore.FencedOutError, so obligations 4 and 5 hold at commit
// (docs/host-store-contract.md#ob-4, #ob-5). A commit id found in table
// commits returns nil and changes nothing (#ob-3). A token never issued (0,
// or above the highest) returns *hoststore.InvalidError, and so does a
// create of a name that was deleted, which the contract allows
// (docs/host-store-contract.md#edges).
//
// # What "locks" mean here, and where the failpoints sit
//
// SQLite has one database-wide write lock. A write transaction held open at
// a failpoint would stall every other scope's commit, every acquire and
// renew, and commits of different scopes must not wait for each other
// (docs/host-store-contract.md#ob-8). So this store
// never holds the write lock across a failpoint, and takes no lock of its own
// before it: in-process mutexes would not cross handles (a new Open is a new
// process), and the write lock itself is held only for the few statements of
// one batch. The sites are:
//
//   - instore.CommitLocked: at the start of the commit, before it checks
//     anything. No lock is held there: for this store, the locks that keep
//     other commits of its scopes out are none.
//   - the precheck: one read-only snapshot (WAL readers never wait for the
//     writer) returns a landed commit id, a token never issued, a superseded
//     token or a version mismatch early, without taking the write lock.
//   - instore.CommitBeforePoint: after the precheck, just before BEGIN
//     IMMEDIATE. The transaction then checks everything again (the precheck
//     is advisory: another process may have committed meanwhile) and applies.
//   - the commit point is COMMIT.
//   - instore.CommitAfterPoint: just after COMMIT returned.
//
// A commit held at any site therefore holds no SQLite lock and blocks no
// commit of another scope, no acquire, load or listing, from this handle or
// another.
//
// Within one handle, write transactions go through one connection (the
// write pool has one connection): SQLite admits one writer at a time anyway,
// and queueing the handle's writers in Go is much cheaper than letting them
// spin in SQLite's busy handler. Writers of different handles meet at
// SQLite's lock under busy_timeout.
//
// # Errors
//
// Every failure before anything is applied, SQLITE_BUSY after busy_timeout
// included, is *hoststore.UnavailableError; a failure of COMMIT itself, the
// caller's context or a Kill ending during COMMIT included, is
// *hoststore.IndeterminateError: the outcome is unknown. A context that ended
// before COMMIT returns ctx.Err().
//
// # Fence and clock
//
// The fence is one row (token, lease expiry); the clock is one row holding
// a per-realm offset in nanoseconds, added to the Go wall clock (the only
// clock SQLite has here; a wall clock stepped back lengthens the leases
// read until it catches up) wherever the store reads "now" for leases.
// Factory.LapseFenceLeases moves the offset just past the recorded lease's
// expiry, so that no test sleeps through a real lease. Acquire and renew are
// short write transactions of their own, off the commit path.
//
// # Kill
//
// Store.Kill cancels every call in flight on the handle and closes both
// pools. SQLite interrupts a running statement, and an open transaction is
// rolled back: database/sql rolls it back and discards its connection, which
// is what SQLite does for a process that dies (its locks go with its file
// descriptors). A COMMIT already under way when Kill comes may still land,
// as it may for a process killed during its COMMIT; the commit then returns
// *hoststore.IndeterminateError. Store.Close is the graceful close.
package sqlite
