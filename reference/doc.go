// Package reference provides the in-memory host store that conform measures
// every other store against. A Factory makes a realm in memory and its
// Stores pass every row of the harness; a store author can read them as a
// worked example and run them to see what a call should return. A Model is
// the same behaviour without fences, clocks or concurrency: it applies
// accepted batches and returns what a correct store shows, so a test can
// compare a store with it.
//
// The Store and the Model share one definition of what a batch does
// (docs/host-store-contract.md#batches): an update's parts apply in the
// order TruncateAfter, DropBefore, Append, Head; rows keep their indices,
// so a scope's visible rows are exactly the indices [start, end); every
// update that lands moves its scope to Next and records the batch's commit
// id. Scope states do not change once built, so a Model clones cheaply.
//
// The Store publishes each scope's state as an immutable snapshot behind an
// atomic pointer, so readers never wait. A commit locks only its own
// scopes, in a fixed order; a batch over several scopes becomes visible in
// all of them at one atomic step on its commit record; the fence is
// ordered against commit points by short shared locks (see Store.Commit).
// Leases run on a manual Clock, which Factory.LapseFenceLeases advances.
//
// Where docs/host-store-contract.md lets a store choose, the reference
// chooses (see #edges there):
//   - obligations 4 and 5 are met at commit: a wrong Previous returns
//     *hoststore.ConflictError, a superseded token *hoststore.FencedOutError;
//   - a create of a name that was deleted returns *hoststore.InvalidError;
//   - a retry of a commit id that already landed returns nil and changes
//     nothing;
//   - a limit <= 0 in ListHeads or ReadRows is a malformed request and
//     returns *hoststore.InvalidError, as does a malformed scope, kind or
//     listing cursor.
package reference
