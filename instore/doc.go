// Package instore provides the in-store failpoints a host store calls from
// its own commit path, so that the conform harness can hold a commit in
// flight inside the store, or crash it midway. It is three sites and one
// function, At. It imports only the standard library and packages of this
// module that link no test framework, so a store that imports it links
// nothing of the harness. The rules for the sites are in
// docs/host-store-contract.md#in-store-failpoints.
//
// A store calls At at each of the three sites of every commit, one line
// each:
//
//	if err := instore.At(ctx, instore.CommitLocked, batch.CommitID()); err != nil {
//		return err
//	}
//
// The sites, in the order a commit passes them:
//
//   - CommitLocked: the commit holds what keeps other commits of its scopes
//     out, and has not checked anything yet;
//   - CommitBeforePoint: just before the commit point, the moment after
//     which the batch is visible;
//   - CommitAfterPoint: just after the commit point, before the store
//     returns.
//
// A store that calls none of them still runs every row of the chapter. The
// rows that need them report what they could not reach as not exercised,
// and the run is not conformant: what was not shown is not passed. A store
// that has no sites yet can say so (harness.WithoutInStoreFaults, or
// conform run --without-instore-faults); the run can then be "conformant
// without in-store faults", and every report says what that left out.
//
// A store may call a site more than once in one commit, for instance
// CommitLocked once per scope when it locks scopes one at a time, or
// again when it retries a transaction itself; it passes the same commit id
// each time. The harness counts the calls of each commit id at each site
// as passes (the first is pass 1) and may hold or crash the commit at any
// of them, so the rules of the next section hold at every call.
//
// # Where the sites go
//
// The harness may hold a commit at a site for as long as a row needs, and
// every lock the commit holds there is held as long. Commits of different
// scopes must not wait for each other (docs/host-store-contract.md#ob-8). So
// a commit may sit at a site holding only locks that no commit of another
// scope, and no acquire or renew, ever needs.
//
// With a database that has row locks and admits many writers at once
// (PostgreSQL, MySQL/InnoDB), the sites go inside the transaction. BEGIN and
// lock the rows of the batch's scopes (SELECT ... FOR UPDATE), then call
// CommitLocked. Check the batch and write it, then call CommitBeforePoint
// just before COMMIT. Call CommitAfterPoint just after COMMIT returns. Row
// locks stop only commits of the same scopes.
//
// With an engine that has one write lock for the whole database (SQLite,
// bbolt), a write transaction held open at a site would stall every other
// writer: other scopes' commits, acquires and renewals. Such a store must
// not sit at a site while it holds the write lock. It calls CommitLocked at
// the start of the commit, holding nothing. It checks the batch in a
// read-only snapshot, which does not wait for the writer, and refuses early
// what it can. It calls CommitBeforePoint just before it takes the write
// lock (BEGIN IMMEDIATE, or bbolt's Update). In the write transaction it
// checks everything again, since another process may have committed
// meanwhile, applies the batch and commits; the commit point is COMMIT. It
// calls CommitAfterPoint once COMMIT has returned and the write lock is
// released. Package stores/sqlite of this module does exactly this; its
// doc says why.
//
// An in-memory store follows the first pattern with one lock per scope,
// taken in a fixed order, and never holds a store-wide mutex at a site.
//
// # What At returns
//
// At returns nil almost always. With nothing armed it costs one atomic load
// and allocates nothing. While the harness holds the commit at the site, At
// blocks until the harness releases it or ctx ends. When the harness
// crashes the commit there, At returns an error wrapping ErrCrashed.
//
// On any error from At, the store returns that error at once, as a process
// that died there would: it abandons an open transaction (the backend
// aborts it; it does not COMMIT) and takes no graceful step of its own.
// Before the commit point nothing of the batch is applied; after it the
// batch stays applied and only the answer is lost. The harness treats the
// handle as killed after a crash.
//
// Nothing in this package arms a site. The harness arms them from its own
// packages.
package instore
