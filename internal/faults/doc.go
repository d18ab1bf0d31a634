// Package faults is conform's fault injector: it arms the in-store
// failpoints that a store calls from its own commit path (package instore),
// wraps a store to kill and break its requests from outside, and keeps the
// catalogue that names them all ("Fault layers" in the architecture: layer
// 1 is the wrapper, layer 2 the in-store failpoints).
//
// # One injector per run
//
// An Injector holds everything one run arms; several runs in one process
// each have their own (NewInjector) and never see each other's holds,
// terms, pass counts or harness time. A run binds its injector to the
// context it passes to every store call (Injector.Bind). There is no
// default injector: everything is armed on one run's injector.
//
// # In-store failpoints
//
// A store calls instore.At at the three instore sites of its commit; the
// package doc of instore says where they go and what a store does with an
// error. instore depends on nothing of this package: it calls through
// internal/hook, which runs the injector the commit's context carries. A
// store that commits under a context of its own reaches the injectors with
// something armed by commit id: the first that claims it (Injector.Claim;
// an injector claims the commits sent through its wrapper and those it
// saw under a bound context); a commit that none claims meets no fault.
// An injector is in internal/hook's slot from the first hold, recorder or
// term set armed to the last one disarmed; with nothing armed anywhere the
// slot is empty and instore.At costs one atomic load.
//
// HoldAt holds the first matching commit at a site until the harness
// releases it (Release) or crashes it there (Crash; instore.At then returns
// an error wrapping instore.ErrCrashed). The harness treats the handle as
// killed after a crash.
//
// # Passes
//
// A store may reach a site more than once in one commit (once per scope, an
// internal retry). While anything in-store is armed, an injector numbers
// each commit id's calls at each site: pass 1 is its first time there.
// HoldAtPass holds (or, crashed before the commit arrives, crashes) a
// commit at one pass only; HoldAt takes the first matching pass, whatever
// its number. A Recorder (Record) keeps the passes the commits it matches
// made, in order (Trail), so that a driver can crash another run of a
// commit at each (site, pass) it reached; Passes reads the injector's
// own counts. The counts are bounded (PassMemory) and dropped when nothing
// is armed; ForgetPasses drops a commit's before it runs again while
// something stays armed.
//
// # Terms
//
// The sites are github.com/pingcap/failpoint failpaths (FailpathPrefix and
// the site's name), and a run can arm them with terms (ArmTerms, or the
// CLI's --failpoint through ParseFailpointFlag and Arm): `return("crash")`
// or `return(true)` crashes, `sleep(ms)` delays, `N*` counts, `->` chains.
// Terms armed at a site (ArmTerms, `commit-locked=terms`) are evaluated at
// every call, and their counts run over all calls, whatever the commit and
// pass; terms armed at a pass (ArmTermsAtPass, `commit-locked@2=terms`)
// only at each commit's call of that pass, and their counts over those.
// conform takes a subset of the library's language and refuses the rest
// with an error that says why: `N%` (an unseeded global source: a run could
// not be reproduced), `pause` (use a Hold), `panic`, `break`, `print`. See
// terms.go for the traps of the library this package steps around.
//
// pingcap/failpoint's registry is the process's. Each arming of terms has
// a failpath of its own (the site's failpath and a serial number), so its
// counts are that arming's and its injector's. The three site failpaths
// are shared: a site's is enabled while any injector has something armed
// there, and each call through it carries the injector it dispatches to.
//
// Terms are armed only through this package, which returns an error for
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
// (WrapSite, ArmWrapTerms). A wrapper's terms are those of the injector of
// each call (Store).
//
// # The catalogue
//
// Catalogue lists every named failpoint with one doc line; Lookup,
// ParseFailpointFlag, Arm and Disarm serve the CLI's --failpoint flag over
// both layers.
package faults
