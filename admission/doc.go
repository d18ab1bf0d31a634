// Package admission implements realm admission fences: local flock fences
// that keep a realm's configuration and authorization files still while an
// admission reads them (spec: realm-admission-fences.txt).
//
// "A fence is a lock file, admission.lock, in a directory whose files an
// admission reads. An admission holds its set of fences SHARED; a writer of
// one of those files takes its fence EXCLUSIVE first, so it waits for the
// admission to end, and writers of one fence exclude each other the same way."
//
// A Guard takes a set of fences EXCLUSIVE for a writer; a Hold takes a set
// SHARED for an admission and never creates a fence file. Fences are built by
// a Layout (U, C and R, the realm fences) or by DocumentFence (the fence beside
// a document); a set must follow the one global order of the spec, or it is
// refused before anything is locked.
//
// Every refusal is typed and is never an unknown outcome: *InProgressError
// (ADMISSION_IN_PROGRESS) or *UnavailableError (ADMISSION_FENCE_UNAVAILABLE)
// with a Cause. Nothing is held after a refusal.
//
// # Waiting
//
// A blocking flock(2) cannot be cancelled, so an acquire with a bound polls
// flock with LOCK_NB and a doubling backoff (1ms up to 50ms) that never
// sleeps past the deadline; the last attempt is made at the deadline, so an
// acquire gives up at its bound and no later. No goroutine or thread is left
// blocked after a refusal. Polling is not fair: a writer can wait out its
// whole bound behind a stream of overlapping shared holders.
//
// # Platforms
//
// The Linux parts are tested. On macOS the same code builds (APFS and HFS+
// host fences, recognised by the statfs type name) but it has not been run
// here. On every other platform nothing hosts a fence: a standalone install
// skips every fence and a composed install refuses them.
package admission
