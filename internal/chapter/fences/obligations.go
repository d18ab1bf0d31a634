package fences

// Obligation is one rule of realm admission fences the chapter certifies,
// in the conformance suite's own words. Its fields are plain strings so that
// a framework can convert the catalogue to its own types.
type Obligation struct {
	// ID is stable and typed in label filters and reports ("adm:order").
	ID string
	// Title is a few words.
	Title string
	// Statement is the rule in one or two sentences.
	Statement string
}

// Obligation IDs. A row's specs carry the label "ob:<ID>" for each one the
// row checks, and every failure a row reports names one of them.
const (
	ObExclusion   = "adm:exclusion"
	ObBound       = "adm:bound"
	ObNoCreate    = "adm:no-create"
	ObFlock       = "adm:flock"
	ObOrder       = "adm:order"
	ObRealmIDs    = "adm:realm-ids"
	ObPermissions = "adm:permissions"
	ObFiles       = "adm:files"
	ObFollow      = "adm:follow"
	ObFilesystems = "adm:filesystems"
	ObRefusals    = "adm:refusals"
	ObRelease     = "adm:release"
)

// Obligations returns the catalogue, in the order reports list it.
func Obligations() []Obligation {
	return []Obligation{
		{ObExclusion, "Writers exclude everyone, admissions share",
			"A guard (a writer) holds its fences exclusively: while it is held no other guard and no hold of the same fence is granted, in any process. Holds (admissions) of one fence coexist with each other and keep every guard out until the last of them lets go."},
		{ObBound, "Waiting is bounded, trying never waits",
			"A bounded acquire that finds a fence held waits at most its bound and then refuses as in progress, and takes the fence if the holder lets go in time. The try form refuses at once while the fence is held."},
		{ObNoCreate, "Holds never create fences",
			"Only a guard creates a missing fence file. A hold where no fence exists skips that fence and leaves the directory as it was."},
		{ObFlock, "The locks are flock(2) locks on the fence file",
			"Guards and holds are whole-file flock(2) locks on admission.lock itself, exclusive and shared, so any other program that flocks the file (util-linux flock(1), say) is kept out and keeps them out by the same rules."},
		{ObOrder, "One global order, checked before locking",
			"A set of fences is taken user fence first, then credential fences by realm id in byte order, then one chain's realm fences from its root to its head, and a document's fence only on its own. A set that breaks this order or grouping is refused as unavailable (cause order) before any of its fences is touched."},
		{ObRealmIDs, "Realm ids are one path component",
			"A realm id that is empty, \".\", \"..\" or holds a slash names no realm fence: taking it is refused as unavailable (cause realm-id) and nothing is created in the layout."},
		{ObPermissions, "Mode 0640 and the directory's group",
			"The participant that creates a fence creates it exclusively with mode exactly 0640, whatever its umask, and with the group of the fence's directory, inherited from a setgid directory or set by the creator. A creator that cannot set the group, and any participant the file's permissions deny, is refused as unavailable (cause permissions). A fence that exists with another mode or another group than its directory's is refused the same way by every participant and left as it is for its owner to correct, whoever that owner is; a fence another participant created right is taken."},
		{ObFiles, "A fence is one regular file, never a link",
			"A fence is opened without following a symbolic link and only as a regular file with a single link; a symbolic link, a file with several links or anything that is not a regular file is refused as unavailable with the matching cause (symlink, links, not-regular)."},
		{ObFollow, "A removed fence is followed, not refused",
			"A fence may be removed or replaced by a holder (a delete, a prune, an archive) between the moment a participant opens it and the moment it has locked it and checked it. The participant then lets that file go and takes the file the path names now, or answers in progress: it never refuses such a fence as unavailable, and never answers held for a lock on a file the path no longer names."},
		{ObFilesystems, "Fences live on local flock filesystems only",
			"A fence is used only where flock is native to a local filesystem. Elsewhere a standalone install skips the fence, while a composed install refuses as unavailable (cause composed-install); a fence file that is itself on such a filesystem is refused (cause filesystem)."},
		{ObRefusals, "A refusal holds nothing",
			"Each refusal is one of the two typed answers, in progress or unavailable with a cause, and leaves nothing of the set held: another process can take every fence of a refused set at once."},
		{ObRelease, "A fence belongs to the process that took it",
			"A fence is let go when its holder releases it or its process ends, even by SIGKILL, and a child process the holder starts inherits no descriptor of the fence, so the child never keeps it locked."},
	}
}

// ObligationByID returns the obligation with the given ID; ok is false when
// the catalogue has none.
func ObligationByID(id string) (o Obligation, ok bool) {
	for _, o := range Obligations() {
		if o.ID == id {
			return o, true
		}
	}
	return Obligation{}, false
}
