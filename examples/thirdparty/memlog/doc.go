// Package memlog is a small in-memory host store, written from conform's
// contract (docs/host-store-contract.md in the conform module) as a
// third-party store author would write it, and certified by conform in
// conform_test.go.
//
// A realm (Factory) keeps, per scope, an immutable state: a versioned head
// and the visible rows [start, end) with their stable indices. A commit
// never mutates a state; it builds the next one ("copy on write") and makes
// every scope of the batch visible at once at its commit point.
//
// How the obligations are met:
//
//   - All or nothing: the new states of every scope of a batch are swapped
//     in together under the realm's mutex, which loads take too.
//   - Durable: the realm outlives every handle; Open is a new "process".
//   - Idempotent retry: the realm remembers every commit id that landed; a
//     second send of one returns nil and changes nothing.
//   - One version chain per scope: a commit refuses a batch whose previous
//     version is not the scope's current one with *ConflictError.
//   - Fencing: the token check and the apply are one step under the realm's
//     mutex, which acquire takes too, so a stale batch that reaches its
//     commit point after an acquire returns *FencedOutError.
//   - Independence: a commit takes one lock per scope it writes, in sorted
//     order, and holds them across its failpoints; the realm's mutex is held
//     only for map look-ups and the apply itself, never while a commit waits.
//
// Fence leases run on a manual clock: it moves only when LapseFenceLeases
// advances it past every lease. A real store would read its backend's clock.
package memlog
