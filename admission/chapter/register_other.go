//go:build !linux

package chapter

import . "github.com/onsi/ginkgo/v2"

// register adds one row that reports the chapter as not exercised: its
// rows need Linux (/proc, mount namespaces, flock(1)).
func register(*Config) {
	It("runs on Linux only", func() {
		Skip("not exercised: the admission chapter runs on Linux only")
	})
}

// ServeHelperIfRequested returns at once: there is no helper off Linux.
func ServeHelperIfRequested() {}
