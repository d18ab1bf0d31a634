// Package admission implements realm admission fences: local flock fences
// that keep a realm's configuration and authorization files still while an
// admission reads them. The rules it keeps are the admission chapter's
// obligations (adm:*, listed by `conform list`); the chapter's helper
// protocol is docs/admission-helper-protocol.md.
//
// Each fence is a file named admission.lock in the directory it guards. An
// admission locks every fence it reads under in shared mode, so admissions
// run side by side. A writer locks the fence of the directory it writes in
// exclusive mode first: it waits until no admission and no other writer
// holds that fence.
//
// A Guard takes a set of fences EXCLUSIVE for a writer; a Hold takes a set
// SHARED for an admission and never creates a fence file. Fences are built by
// a Layout (U, C and R, the realm fences) or by DocumentFence (the fence beside
// a document); a set must follow the one global order (adm:order), or it is
// refused before anything is locked.
//
// Every refusal is typed and is never an unknown outcome: *InProgressError
// (ADMISSION_IN_PROGRESS) or *UnavailableError (ADMISSION_FENCE_UNAVAILABLE)
// with a Cause. Nothing is held after a refusal.
//
// # Permissions
//
// A guard that creates a fence creates it exclusively with no permission
// bits, gives it the directory's group (unless a setgid directory gave it
// already) and then mode 0640, whatever the umask. Until that last step the
// fence is being created: a participant that finds a fence without any
// permission bit answers in progress, or waits for it as for a held fence.
//
// A fence that exists is checked before it is locked, and refused, never
// repaired: a mode other than exactly 0640 (0666, 0644, 0600, a setuid,
// setgid or sticky bit, ...) or a group other than its directory's is
// refused by every participant, guard or hold, root included, with
// CausePermissions, and the file is left as it is until its owner corrects
// it. So a creator refused because it could not give its new fence the
// directory's group leaves a fence that the next participant refuses the
// same way. The owner is not checked: whichever participant came first
// owns the fence. A fence that denies a participant is refused for it by
// the operating system, with the same cause.
//
// # Races
//
// A take opens the fence, checks it, locks it, and then checks that the
// path still names the very file it locked, with one link. A fence removed
// or replaced in between (a delete, a prune or an archive, which remove a
// live fence only while they hold it) is let go and followed to the file
// the path names now: a guard creates a new one, a hold skips a missing
// one. A take that opens eight fences in vain answers in progress; it
// never answers unavailable for a fence that merely went, and never
// reports a lock on a file the path no longer names as held.
//
// The fence is opened without following a link, by its one name in an open
// directory, so an open that fails for a symbolic link is answered with
// CauseSymlink whatever the entry has become since; a fence swapped for a
// link after its open is followed to the link and refused the same way.
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
