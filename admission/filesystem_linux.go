//go:build linux

package admission

import "golang.org/x/sys/unix"

// hosting are the Linux filesystems whose flock is native, by statfs magic.
var hosting = map[uint64]string{
	0xEF53:     "ext2/3/4",
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0x858458F6: "ramfs",
	0xF2F52010: "f2fs",
	0x794C7630: "overlayfs",
	0x2FC12FC1: "zfs",
	0xCA451A4E: "bcachefs",
}

// named are filesystems that host no fence, named for the command's output.
var named = map[uint64]string{
	0x9FA0:     "proc",
	0x62656572: "sysfs",
	0x1CD1:     "devpts",
	0x6969:     "nfs",
	0xFF534D42: "cifs",
	0xFE534D42: "smb2",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x73717368: "squashfs",
	0x9660:     "iso9660",
	0x4D44:     "vfat",
	0x2011BAB0: "exfat",
	0x5346544E: "ntfs",
	0x00C36400: "ceph",
	0x63677270: "cgroup2",
	0x27E0EB:   "cgroup",
	0x64626720: "debugfs",
	0x73636673: "securityfs",
	0x19800202: "mqueue",
	0x6E736673: "nsfs",
}

// classify is the predicate: the one place that decides whether a
// filesystem hosts fences.
func classify(st *unix.Statfs_t) Filesystem {
	magic := uint64(uint32(st.Type))
	if name, ok := hosting[magic]; ok {
		return Filesystem{Magic: magic, Name: name, HostsFences: true}
	}
	if name, ok := named[magic]; ok {
		return Filesystem{Magic: magic, Name: name}
	}
	return Filesystem{Magic: magic, Name: "unknown"}
}
