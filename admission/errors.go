package admission

import (
	"errors"
	"fmt"
)

// Code is the wire code of a refusal, as helpers and reports print it.
type Code string

const (
	// CodeInProgress is the code of an *InProgressError: a fence of the set
	// is held in a mode that excludes the requested one.
	CodeInProgress Code = "ADMISSION_IN_PROGRESS"
	// CodeUnavailable is the code of an *UnavailableError: the set cannot be
	// fenced, for the reason its Cause names.
	CodeUnavailable Code = "ADMISSION_FENCE_UNAVAILABLE"
)

// Cause says why a set was refused as unavailable.
type Cause uint8

const (
	// CauseOrder means the set breaks adm:order. Its fences are out of the
	// global order, it is empty, its R fences come from more than one
	// RealmChain call, or a document's fence is not alone in it. Such a set
	// is refused before any of its fences is touched.
	CauseOrder Cause = iota + 1
	// CausePermissions means the file or its directory denies this
	// participant, the creator could not set the fence's mode or group, or
	// the fence's mode is not exactly 0640 or its group not its directory's
	// (adm:permissions).
	CausePermissions
	// CauseNotRegular means admission.lock is not a regular file: a
	// directory, a FIFO, a device or a socket (adm:files).
	CauseNotRegular
	// CauseSymlink means admission.lock is a symbolic link (adm:files).
	CauseSymlink
	// CauseLinks means admission.lock has more than one link (adm:files). A
	// fence with no link left was removed after it was opened; it is
	// followed, not refused (adm:follow).
	CauseLinks
	// CauseFilesystem means the fence file lives on a filesystem that hosts
	// no fence although its directory is on one that does (a mount over the
	// file), or flock(2) fails there as unsupported (adm:filesystems).
	CauseFilesystem
	// CauseComposed means the install is composed and the fence's directory
	// is on a filesystem that hosts no fence. A standalone install skips
	// such a fence instead (adm:filesystems).
	CauseComposed
	// CauseRealmID means a realm id is ".", "..", empty, more than one path
	// component, or too long for a directory name (adm:realm-ids).
	CauseRealmID
	// CauseIO means any other error of the operating system (a missing
	// directory for a guard, EIO, ...), wrapped in the error. Nothing is
	// held. It keeps such failures typed rather than unknown.
	CauseIO
)

var causeNames = map[Cause]string{
	CauseOrder:       "order",
	CausePermissions: "permissions",
	CauseNotRegular:  "not-regular",
	CauseSymlink:     "symlink",
	CauseLinks:       "links",
	CauseFilesystem:  "filesystem",
	CauseComposed:    "composed-install",
	CauseRealmID:     "realm-id",
	CauseIO:          "io",
}

// String returns the cause's stable lower-case name, as a helper of the
// admission chapter reports it (see docs/admission-helper-protocol.md):
// "order", "permissions", "not-regular", "symlink", "links", "filesystem",
// "composed-install", "realm-id" or "io". An unknown cause is "cause(N)".
func (c Cause) String() string {
	if n, ok := causeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("cause(%d)", uint8(c))
}

// ParseCause returns the cause whose String is name. It is the inverse of
// Cause.String; ok is false for an unknown name.
func ParseCause(name string) (c Cause, ok bool) {
	for c, n := range causeNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}

// InProgressError is the refusal with code ADMISSION_IN_PROGRESS. A fence
// of the set was held in a mode that excludes the requested one, and the
// acquire's bound ran out (a try has none). Nothing of the set is held.
// Trying again later may succeed.
type InProgressError struct {
	// Path is the fence file that was held.
	Path string
}

// Error returns a message that names the held fence file.
func (e *InProgressError) Error() string {
	return fmt.Sprintf("admission in progress: %s is held", e.Path)
}

// Code returns CodeInProgress.
func (e *InProgressError) Code() Code { return CodeInProgress }

// UnavailableError is the refusal with code ADMISSION_FENCE_UNAVAILABLE.
// The set cannot be fenced, for the reason Cause names. Nothing of the set
// is held.
type UnavailableError struct {
	// Cause is why the set was refused.
	Cause Cause
	// Path is the fence file (or the realm id for CauseRealmID); empty when
	// the refusal is about the set as a whole.
	Path string
	// Detail says what was found, in words.
	Detail string
	// Err is the operating system's error, if one led here.
	Err error
}

// Error returns a message with the cause, the path, the detail and the
// operating system's error, each when present.
func (e *UnavailableError) Error() string {
	s := "admission fence unavailable (" + e.Cause.String() + ")"
	if e.Path != "" {
		s += ": " + e.Path
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the operating system's error, or nil.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Code returns CodeUnavailable.
func (e *UnavailableError) Code() Code { return CodeUnavailable }

// UncoveredError is WriteFile's refusal of a guard that does not hold the
// fence of the file's directory, or that was released. Nothing was written.
type UncoveredError struct {
	// Path is the file that was not written.
	Path string
}

// Error returns a message that names the file and says nothing was written.
func (e *UncoveredError) Error() string {
	return fmt.Sprintf("admission fence: the guard does not cover %s; nothing written", e.Path)
}

// unavailable returns the refusal for cause c, with its path, detail and
// operating system error.
func unavailable(c Cause, path, detail string, err error) *UnavailableError {
	return &UnavailableError{Cause: c, Path: path, Detail: detail, Err: err}
}

// CauseOf returns the cause of the first *UnavailableError in err's chain;
// ok is false when there is none.
func CauseOf(err error) (c Cause, ok bool) {
	var u *UnavailableError
	if errors.As(err, &u) {
		return u.Cause, true
	}
	return 0, false
}

// IsInProgress reports whether err's chain holds an *InProgressError.
func IsInProgress(err error) bool {
	var p *InProgressError
	return errors.As(err, &p)
}
