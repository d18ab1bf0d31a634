package admission

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/conform-spi/conform/internal/textsafe"
)

// HostsFencesUsage is the command's usage line.
const HostsFencesUsage = "usage: conform hosts-fences DIR..."

// HostsFencesMain runs `conform hosts-fences DIR...`. It tells, for each
// directory in args, whether fences can live there, using StatFilesystem as
// guards and holds do. It prints one line per directory,
// "DIR<TAB>hosts fences|hosts no fence<TAB>FILESYSTEM". A leading "--" ends
// the options; there are no others. It returns the exit code: 0 when every
// directory hosts fences, 1 when any does not, and 2 for bad usage or for a
// path that is missing or not a directory. Errors go to stderr; after a bad
// path the other directories are still printed.
func HostsFencesMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	} else {
		for _, a := range args {
			if strings.HasPrefix(a, "-") && a != "-" {
				fmt.Fprintf(stderr, "hosts-fences: unknown option %s\n%s\n", textsafe.Line(a), HostsFencesUsage)
				return 2
			}
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, HostsFencesUsage)
		return 2
	}
	code := 0
	for _, dir := range args {
		fsys, err := hostsFences(dir)
		if err != nil {
			fmt.Fprintf(stderr, "hosts-fences: %s\n", textsafe.Line(err.Error()))
			code = 2
			continue
		}
		verdict := "hosts no fence"
		if fsys.HostsFences {
			verdict = "hosts fences"
		} else if code == 0 {
			code = 1
		}
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", textsafe.Line(dir), verdict, textsafe.Line(fsys.label()))
	}
	return code
}

// hostsFences returns StatFilesystem for dir, or an error when dir is
// missing or not a directory.
func hostsFences(dir string) (Filesystem, error) {
	info, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Filesystem{}, fmt.Errorf("%s: no such directory", dir)
		}
		return Filesystem{}, err
	}
	if !info.IsDir() {
		return Filesystem{}, fmt.Errorf("%s: not a directory", dir)
	}
	return StatFilesystem(dir)
}
