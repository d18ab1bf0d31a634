// Package reference is conform's in-memory reference for the Host Store SPI:
// a pure Model of the contract, which the chapter applies accepted batches
// to and compares every store against, and a concurrent Store over one
// realm built on the same core, which passes every row of the chapter.
//
// The two share one definition of what a batch does ("Batches" in
// host-store-spi.txt): the parts of an update apply in the order
// truncate_after, drop_before, append, head; rows keep stable indices, so a
// scope's visible rows are exactly the indices [start, end); every committed
// update moves its scope to Next and records the batch's commit id. Scope
// states are immutable once built, so a Model clones cheaply.
//
// The Store publishes each scope's state as an immutable snapshot behind an
// atomic pointer, so readers never wait. A commit locks only its own
// scopes, in a fixed order; a batch over several scopes becomes visible in
// all of them at one atomic step on its commit record; the fence is
// ordered against commit points by short shared locks (see Store.Commit).
// Leases run on a manual Clock, which Factory.LapseFenceLeases advances.
//
// Choices where the contract lets a store choose:
//   - obligations 4 and 5 are met at commit: a wrong Previous returns
//     *hoststore.ConflictError, a superseded token *hoststore.FencedOutError;
//   - a create of a name that was deleted returns *hoststore.InvalidError
//     ("a store may refuse such a create as Invalid");
//   - a retry of a commit id that already landed returns nil and acts never;
//   - a limit <= 0 in ListHeads or ReadRows is a malformed request and
//     returns *hoststore.InvalidError, as does a malformed scope, kind or
//     listing cursor.
package reference
