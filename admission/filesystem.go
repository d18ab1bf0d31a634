package admission

import "fmt"

// Filesystem is what StatFilesystem found for a directory or a fence file.
// Fences are hosted only by local filesystems where flock(2) is native
// (adm:filesystems). Guards, holds and the hosts-fences command all decide
// with the same predicate.
type Filesystem struct {
	// Magic is statfs's f_type on Linux; 0 where the platform names its
	// filesystems instead.
	Magic uint64
	// Name is the filesystem's name ("ext2/3/4", "tmpfs", "proc", ...), or
	// "unknown".
	Name string
	// HostsFences reports whether a fence can live there.
	HostsFences bool
}

// String returns the filesystem and its verdict, such as
// "tmpfs (0x1021994), hosts fences".
func (f Filesystem) String() string {
	verdict := "hosts no fence"
	if f.HostsFences {
		verdict = "hosts fences"
	}
	return f.label() + ", " + verdict
}

// label names the filesystem with its magic where it has one:
// "tmpfs (0x1021994)".
func (f Filesystem) label() string {
	if f.Magic == 0 {
		return f.Name
	}
	return fmt.Sprintf("%s (%#x)", f.Name, f.Magic)
}
