// Package sqlite is a Host Store SPI store in one local SQLite file: the
// spec's "transactional database" shape ("Mapping Onto A Database"), built
// on modernc.org/sqlite (pure Go, driver name "sqlite") and on the public
// API of conform only (package hoststore, and instore.At for the three
// in-store failpoints), as a third party would write it.
//
// # Realm, handles and URL
//
// A realm is one database file. The URL form is
//
//	sqlite:PATH
//
// where PATH names the file (created with its schema when absent; a
// certifying run wants a path that does not exist yet, since a realm starts
// empty). Every Factory.Open is a new process: a new pair of *sql.DB pools
// over the same file that holds nothing of earlier handles. The file runs in
// journal_mode=WAL with synchronous=FULL (a commit that answered nil survives
// a crash of the process and of the machine), and busy_timeout makes a
// connection wait for SQLite's write lock instead of failing at once.
//
// # Commit
//
// Each batch commits in one short BEGIN IMMEDIATE … COMMIT transaction
// that, as the spec asks, records the commit id (table commits), checks the
// batch's token against the fence row and each update's previous against
// the stored version, and applies every update. It refuses with
// *hoststore.ConflictError and *hoststore.FencedOutError: obligations 4 and 5
// are met at commit. A commit id that already landed returns nil without
// acting again (obligation 3). A token never issued (0, or above the
// highest) is *hoststore.InvalidError, and so is a create of a deleted
// scope's name ("a store may refuse such a create as Invalid").
//
// # What "locks" mean here, and where the failpoints sit
//
// SQLite has one database-wide write lock. A write transaction held open at
// a failpoint would stall every other scope's commit, every acquire and
// renew, which the spec's independence obligation forbids. So this store
// never holds the write lock across a failpoint, and takes no lock of its own
// before it: in-process mutexes would not cross handles (a new Open is a new
// process), and the write lock itself is held only for the few statements of
// one batch. The sites are:
//
//   - instore.CommitLocked: at the start of the commit, before it checks
//     anything. No lock is held there ("its locks" are none).
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
