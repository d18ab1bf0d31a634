package admission

import (
	"errors"
	"fmt"
)

// Code is the wire code of a refusal.
type Code string

const (
	// CodeInProgress: a holder of another mode holds a fence of the set.
	CodeInProgress Code = "ADMISSION_IN_PROGRESS"
	// CodeUnavailable: the set cannot be fenced; see the Cause.
	CodeUnavailable Code = "ADMISSION_FENCE_UNAVAILABLE"
)

// Cause says why a set was refused as unavailable.
type Cause uint8

const (
	// CauseOrder: the set breaks the order or the grouping rules ("a set that
	// breaks either rule is refused with ADMISSION_FENCE_UNAVAILABLE before
	// anything is locked").
	CauseOrder Cause = iota + 1
	// CausePermissions: the file or its directory denies this participant,
	// the creator could not set the fence's mode or group, or the fence's
	// mode is not exactly 0640 or its group not its directory's.
	CausePermissions
	// CauseNotRegular: admission.lock is not a regular file (a directory, a
	// FIFO, a device, a socket).
	CauseNotRegular
	// CauseSymlink: admission.lock is a symbolic link.
	CauseSymlink
	// CauseLinks: admission.lock has more than one link. A fence with no
	// link left was removed after it was opened; it is followed, not
	// refused.
	CauseLinks
	// CauseFilesystem: the fence file lives on a filesystem that hosts no
	// fence although its directory is on one that does (a mount over the
	// file), or flock(2) itself is not supported there.
	CauseFilesystem
	// CauseComposed: a composed install's fence is on a filesystem that hosts
	// no fence ("A composed install ... never skips").
	CauseComposed
	// CauseRealmID: a realm id that is ".", "..", empty, more than one path
	// component, or too long for a directory name.
	CauseRealmID
	// CauseIO: any other error of the operating system (a missing directory
	// for a guard, EIO, ...), wrapped in the error. Nothing is held. This cause
	// is not among the causes above; it keeps such failures typed rather than
	// unknown.
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

// String is the cause's stable lower-case name, as the chapter's helper
// reports it ("order", "permissions", "not-regular", "symlink", "links",
// "filesystem", "composed-install", "realm-id", "io").
func (c Cause) String() string {
	if n, ok := causeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("cause(%d)", uint8(c))
}

// ParseCause is the inverse of Cause.String; ok is false for an unknown name.
func ParseCause(name string) (c Cause, ok bool) {
	for c, n := range causeNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}

// InProgressError: a fence of the set is held in a mode that excludes the
// requested one, and the acquire's bound (zero for a try) ran out. Nothing is
// held.
type InProgressError struct {
	// Path is the fence file that was held.
	Path string
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("admission in progress: %s is held", e.Path)
}

// Code is CodeInProgress.
func (e *InProgressError) Code() Code { return CodeInProgress }

// UnavailableError: the set cannot be fenced, for Cause. Nothing is held.
type UnavailableError struct {
	// Cause is why.
	Cause Cause
	// Path is the fence file (or the realm id for CauseRealmID); empty when
	// the refusal is about the set as a whole.
	Path string
	// Detail says what was found, in words.
	Detail string
	// Err is the operating system's error, if one led here.
	Err error
}

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

// Unwrap answers the operating system's error, if any.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Code is CodeUnavailable.
func (e *UnavailableError) Code() Code { return CodeUnavailable }

// UncoveredError: a write helper was given a guard that does not hold the
// fence of the file's directory (or was released). Nothing was written.
type UncoveredError struct {
	// Path is the file that was not written.
	Path string
}

func (e *UncoveredError) Error() string {
	return fmt.Sprintf("admission fence: the guard does not cover %s; nothing written", e.Path)
}

func unavailable(c Cause, path, detail string, err error) *UnavailableError {
	return &UnavailableError{Cause: c, Path: path, Detail: detail, Err: err}
}

// CauseOf answers the cause of the *UnavailableError in err's chain; ok is
// false when there is none.
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
