//go:build darwin

package admission

import "golang.org/x/sys/unix"

// classify is the predicate on macOS: APFS and HFS+ host fences, by the type
// name statfs reports. This file builds but has not been run: no macOS host
// was available to test it.
func classify(st *unix.Statfs_t) Filesystem {
	name := unix.ByteSliceToString(st.Fstypename[:])
	switch name {
	case "apfs", "hfs":
		return Filesystem{Name: name, HostsFences: true}
	case "":
		return Filesystem{Name: "unknown"}
	}
	return Filesystem{Name: name}
}
