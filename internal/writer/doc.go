// Package writer is a realm's writer over any host store: the single process
// that owns a realm's meaning while it holds the fence, and keeps every rule a
// store may assume of it (docs/host-store-contract.md#writer-rules). It runs on
// the store's FenceTiming and on a Clock the caller controls. conform's
// long-run and durable-worker chapters run scripted work through it
// (docs/host-store-contract.md#scripted-runs); it is internal to the harness.
//
// The rules, and where the writer keeps them:
//
//   - Exclusive by default. Open acquires with hoststore.Exclusive, and
//     with hoststore.Takeover only when Options.Takeover asks. A writer
//     that fenced itself takes over only its own lease: when its fresh
//     exclusive acquire returns *hoststore.HeldError naming its own token.
//   - Renew on time, stop on doubt. A renewer on the clock renews once
//     every renew interval. Once a renew failed, or the self-fence window
//     closed, the writer sends no commit and lets no model call or tool
//     call start until it holds a new token from a fresh acquire (Refence,
//     which the next write also makes by itself). A renew that succeeds
//     later does not lift this. If the fresh acquire shows that another
//     process holds the fence, or wrote meanwhile (the heads loaded after
//     it differ from the writer's own), the realm stops (ErrStopped) until
//     it is opened again.
//   - Self-fencing on its own clock. Round.Check runs before a model call
//     and at the last moment before a tool call; Commit checks before each
//     batch it sends. None of these checks asks the store anything. Each
//     passes only while less than the self-fence window has gone by since
//     the latest successful acquire or renew began. A call that fails its
//     check is not started, and the round's Commit refuses.
//   - Takeover wait. After an acquire that ended a live holder's lease, the
//     writer's checks first wait out FenceGrant.SupersededLease on its
//     clock.
//   - Bulk load. Open reads every head through ListHeads after its acquire
//     and before its first commit.
//   - Commit ids. Each id carries the token of the acquire and a sequence
//     number, so no id ever names two batches. A batch with an unknown
//     outcome is sent again unchanged, and settled before any later commit
//     to its scopes; after a fresh acquire, the heads loaded settle it.
//   - Large values. A large head goes first into chunks, in a Record scope
//     of its own named by the value's digest (ChunkPrefix), over as many
//     batches as it takes; one more batch, within the limits, then makes
//     the change visible and deletes the chunk scopes it replaces. Chunk
//     scopes that no head refers to are deleted at Open and by Sweep. When
//     even this cannot fit a change, the whole change fails with a
//     *SizeError (docs/host-store-contract.md#limits).
//
// What the writer stores is its own layout (see Decode); Options.Unsafe
// breaks rules on purpose, for harness tests only.
package writer
