// Package admission implements realm admission fences: flock(2) locks that
// keep writers away from the configuration and authorization files of a
// realm while an admission reads them and decides. Its rules are the
// obligations adm:* of the admission chapter; `conform list` prints them.
// docs/admission-helper-protocol.md describes how the chapter drives an
// implementation of fences, this one included.
//
// A fence is the file admission.lock in the directory it guards. An
// admission locks the fences of the directories it reads in shared mode, so
// several admissions run at once. A writer first locks the fence of the
// directory it writes in exclusive mode. It waits until no admission and no
// other writer holds that fence (adm:exclusion).
//
// A writer holds a Guard. Install.AcquireGuard locks a set of fences in
// exclusive mode and creates the fence files that are missing. An admission
// holds a Hold. Install.AcquireHold locks a set in shared mode and skips a
// fence whose file does not exist (adm:no-create). A Layout builds the user,
// credential and realm fences (U, C and R); DocumentFence builds the fence
// beside a document. A set out of the global order (adm:order) is refused
// before any of its fences is touched.
//
// A refusal is one of two typed errors: *InProgressError (code
// ADMISSION_IN_PROGRESS) or *UnavailableError (code
// ADMISSION_FENCE_UNAVAILABLE) with a Cause. The caller always knows the
// outcome, and no fence of the set stays held after a refusal
// (adm:refusals).
//
// # Permissions
//
// A guard that creates a fence creates it exclusively with no permission
// bits, gives it the directory's group (unless a setgid directory gave it
// already) and then mode 0640, whatever the umask. Until that last step the
// fence is being created: a participant that finds a fence without any
// permission bit returns *InProgressError, or waits for it as for a held
// fence (adm:permissions).
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
// one. A take that opens eight fences in vain returns *InProgressError. It
// never returns *UnavailableError for a fence that merely went, and never
// reports a lock on a file the path no longer names as held (adm:follow).
//
// The fence is opened without following a link, by its one name in an open
// directory, so an open that fails for a symbolic link is refused with
// CauseSymlink, whatever the entry has become since. A fence swapped for a
// link after its open is followed to the link and refused the same way
// (adm:files).
//
// # Waiting
//
// A blocking flock(2) cannot be cancelled, so an acquire with a bound polls
// flock with LOCK_NB and a doubling backoff (1ms up to 50ms) that never
// sleeps past the deadline; the last attempt is made at the deadline, so an
// acquire gives up at its bound and no later. No goroutine or thread is left
// blocked after a refusal. Polling is not fair: a writer can wait out its
// whole bound behind a stream of overlapping shared holders (adm:bound).
//
// # Platforms
//
// The Linux parts are tested. On macOS the same code builds (APFS and HFS+
// host fences, recognised by the statfs type name) but it has not been run
// here. On every other platform nothing hosts a fence: a standalone install
// skips every fence and a composed install refuses them (adm:filesystems).
// The command `conform hosts-fences DIR...` (HostsFencesMain) tells whether
// a directory hosts fences.
package admission
