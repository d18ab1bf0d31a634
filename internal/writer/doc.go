// Package writer is Core's writer over any Host Store: the one writer of a
// realm, keeping every rule of "Core's Writer Rules" in the Host Store SPI
// (host-store-spi.txt), on the store's FenceTiming and a Clock the caller
// controls. conform's long-run and durable-worker chapters run scripted
// work through it; it is internal to the harness.
//
// The rules, and where the writer keeps them:
//
//   - Exclusive acquire. Open acquires with hoststore.Exclusive, or with
//     hoststore.Takeover only when Options.Takeover asks; a fenced writer's
//     fresh acquire takes over only its own recorded lease, when an
//     exclusive acquire returns Held with its own token.
//   - Renewing. A renewer on the clock renews once per renew interval.
//     After a failed renew, or once the self-fence window closed, the
//     writer makes no commit, model call or tool call until a fresh
//     acquire with a new token (Refence, which the next write makes by
//     itself); it never resumes on a later renew. If another process holds
//     the fence, or committed meanwhile (the heads loaded after the fresh
//     acquire differ from the writer's), the realm stops (ErrStopped)
//     until it is opened again.
//   - Self-fencing. Round.Check, before each model call and right before
//     each tool call starts, and the check before each batch a commit
//     sends, take no store request: they pass only while the last
//     successful acquire or renew started less than the self-fence window
//     ago. A refused call never starts, and the round's Commit refuses.
//   - Takeover wait. After an acquire that superseded a live holder, the
//     writer's checks first wait out FenceGrant.SupersededLease on its
//     clock.
//   - Bulk load. Open lists every head with ListHeads after its acquire and
//     before its first commit.
//   - Commit ids. Ids carry the fence token of the acquire and a sequence
//     number, so no id is ever used twice; a batch whose outcome is unknown
//     is sent again, the same batch, and settled before any later commit
//     touching its scopes; after a fresh acquire, the heads loaded settle
//     it.
//   - Large values. A large head is written first as chunks, in a Record
//     scope of its own named by the value's digest (ChunkPrefix), in as
//     many batches as needed; then one batch within the limits makes the
//     change visible and deletes the chunk scopes it supersedes. Chunk
//     scopes no head refers to are deleted at Open and by Sweep. A change
//     that cannot be written this way fails whole with a *SizeError.
//
// What the writer stores is its own layout (see Decode); Options.Unsafe
// breaks rules on purpose, for harness tests only.
package writer
