// Package faults is conform's fault injector: the in-store failpoints that a
// store calls from its own commit path, the wrapper that kills and breaks a
// store's requests from outside, and the catalogue that names them all
// ("Fault layers" in the architecture: layer 1 is the wrapper, layer 2 the
// in-store failpoints).
//
// # In-store failpoints
//
// A store calls At at three sites of its commit, one line each:
//
//	if err := faults.At(ctx, faults.CommitLocked, batch.CommitID()); err != nil {
//		return err // the "process" crashed here: abandon the commit, no rollback step of your own
//	}
//
// The sites, in the order a commit passes them:
//
//   - CommitLocked: after the commit has taken its locks or begun its
//     transaction, before it checks anything;
//   - CommitBeforePoint: just before the commit point (the moment after
//     which the batch is visible, e.g. before COMMIT);
//   - CommitAfterPoint: just after the commit point, before the store
//     answers.
//
// At answers nil almost always: when nothing is armed anywhere it costs one
// atomic load and allocates nothing. When the harness holds the commit
// there (HoldAt), At blocks until the harness releases it or ctx ends. When
// the harness crashes it there, At answers an error wrapping ErrCrashed; the
// store must then return that error at once, as a process dying there would:
// a transaction is left to the backend's own abort (drop it, do not COMMIT),
// an in-memory store applies nothing before the commit point and forgets the
// answer after it. The harness treats the handle as killed after a crash.
//
// # Terms
//
// The sites are github.com/pingcap/failpoint failpaths (Site.Failpath), and
// a run can arm them with terms (ArmTerms, or the CLI's --failpoint through
// ParseFailpointFlag and Arm): `return("crash")` or `return(true)` crashes,
// `sleep(ms)` delays, `N*` counts, `->` chains. conform takes a subset of the
// library's language and refuses the rest with an error that says why: `N%`
// (an unseeded global source: a run could not be reproduced), `pause` (use a
// Hold), `panic`, `break`, `print`. See terms.go for the traps of the
// library this package steps around.
//
// Terms are armed only through this package, which answers an error for
// terms it refuses. pingcap/failpoint also reads GO_FAILPOINTS at its init,
// before any of conform's code runs, and exits the process on a malformed
// value: conform never sets it, and this package's init disables any of
// conform's failpaths that it enabled.
//
// # The wrapper
//
// Wrap puts a Store around a HostStore: Inject makes it kill the "process"
// before a request is sent, with it in flight, or after the store answered
// (the answer lost), or answer Unavailable or Indeterminate instead of the
// store. Two wrapper failpaths take terms from the CLI:
// conform/wrap/commit-before-send and conform/wrap/commit-after-answer
// (WrapSite, ArmWrapTerms).
//
// # The catalogue
//
// Catalogue lists every named failpoint with one doc line; Lookup,
// ParseFailpointFlag, Arm and Disarm serve the CLI's --failpoint flag over
// both layers.
package faults
