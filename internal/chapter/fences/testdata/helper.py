#!/usr/bin/env python3
"""An admission helper written from docs/admission-helper-protocol.md alone.

It implements realm admission fences itself, with flock(2) on Linux, and
speaks protocol v1 on stdin and stdout. TestPythonHelper runs the chapter
against it, to show that the protocol document is enough to write a helper
in another language.
"""

import ctypes
import errno
import fcntl
import os
import stat
import subprocess
import sys
import time

FENCE = "admission.lock"
IN_PROGRESS = "refused ADMISSION_IN_PROGRESS"
MAX_OPENS = 8  # fences opened in vain (removed or replaced) before in progress

# statfs magics of the Linux filesystems whose flock is native.
HOSTING = {
    0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x858458F6,
    0xF2F52010, 0x794C7630, 0x2FC12FC1, 0xCA451A4E,
}

libc = ctypes.CDLL(None, use_errno=True)


class Refused(Exception):
    """A typed refusal; its argument is the answer line."""


class Unsettled(Exception):
    """The fence has no permission bits yet: its creator is still at work."""


def unavailable(cause):
    return Refused("refused ADMISSION_FENCE_UNAVAILABLE " + cause)


def hosts_fences(fd):
    buf = ctypes.create_string_buffer(256)  # larger than struct statfs
    if libc.fstatfs(fd, buf) != 0:
        raise unavailable("io")
    return int.from_bytes(buf.raw[:8], sys.byteorder) & 0xFFFFFFFF in HOSTING


def refusal_of(err):
    if err.errno in (errno.EACCES, errno.EPERM):
        return unavailable("permissions")
    if err.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
        return unavailable("not-regular")
    return unavailable("io")


class Helper:
    def __init__(self):
        self.composed = False
        self.held = []  # descriptors, in the order taken
        self.children = []

    # --- taking one fence ---------------------------------------------

    def take(self, directory, exclusive, bound, waiting):
        """Returns a locked descriptor, or None for a skipped fence."""
        try:
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            if not exclusive:
                return None
            raise unavailable("io")
        except OSError as err:
            raise refusal_of(err)
        try:
            if not hosts_fences(dfd):
                if self.composed:
                    raise unavailable("composed-install")
                return None
            deadline = time.monotonic() + bound
            pause = Pause(deadline, waiting)
            opened = 0
            while True:
                try:
                    fd = self.open_fence(dfd, exclusive)
                except Unsettled:
                    pause.wait()
                    continue
                if fd is None:
                    return None
                opened += 1
                try:
                    st = self.check(dfd, fd)
                    if st is not None:
                        self.lock(fd, exclusive, pause)
                except Unsettled:
                    os.close(fd)
                    pause.wait()
                    continue
                except BaseException:
                    os.close(fd)
                    raise
                if st is not None:
                    try:
                        cur = os.stat(FENCE, dir_fd=dfd, follow_symlinks=False)
                        if (cur.st_dev, cur.st_ino, cur.st_nlink) == (st.st_dev, st.st_ino, 1):
                            return fd
                    except FileNotFoundError:
                        pass
                    except OSError as err:
                        os.close(fd)
                        raise refusal_of(err)
                os.close(fd)  # removed or replaced since the open: follow the path
                if opened >= MAX_OPENS or (bound and time.monotonic() >= deadline):
                    raise Refused(IN_PROGRESS)
        finally:
            os.close(dfd)

    def open_fence(self, dfd, create):
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
        while True:
            try:
                return os.open(FENCE, flags, dir_fd=dfd)
            except FileNotFoundError:
                if not create:
                    return None
            except OSError as err:
                raise self.open_refusal(dfd, err)
            try:
                # No permission bits until the group is right: others wait.
                fd = os.open(FENCE, flags | os.O_CREAT | os.O_EXCL, 0, dir_fd=dfd)
            except FileExistsError:
                continue
            except OSError as err:
                raise self.open_refusal(dfd, err)
            refusal = None
            try:
                dgid = os.fstat(dfd).st_gid
                if os.fstat(fd).st_gid != dgid:
                    os.fchown(fd, -1, dgid)
            except OSError:
                refusal = unavailable("permissions")
            try:
                os.fchmod(fd, 0o640)  # last, also when the group is wrong
            except OSError:
                refusal = unavailable("permissions")
            if refusal:
                os.close(fd)
                raise refusal
            return fd

    def open_refusal(self, dfd, err):
        if err.errno in (errno.ELOOP, errno.EMLINK):
            return unavailable("symlink")  # O_NOFOLLOW met a link
        if err.errno == errno.EACCES:
            try:
                st = os.stat(FENCE, dir_fd=dfd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0:
                    return Unsettled()
            except OSError:
                pass
        return refusal_of(err)

    def check(self, dfd, fd):
        """The fence's stat, or None when it has no link left."""
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise unavailable("not-regular")
        if st.st_nlink == 0:
            return None
        if st.st_nlink != 1:
            raise unavailable("links")
        if not hosts_fences(fd):
            raise unavailable("filesystem")
        mode = stat.S_IMODE(st.st_mode)
        if mode == 0:
            raise Unsettled()
        if mode != 0o640 or st.st_gid != os.fstat(dfd).st_gid:
            raise unavailable("permissions")
        return st

    def lock(self, fd, exclusive, pause):
        how = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        while True:
            try:
                fcntl.flock(fd, how | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            pause.wait()

    # --- sets ------------------------------------------------------------

    def take_set(self, dirs, exclusive, bound=0.0, waiting=False):
        taken, skipped = [], 0
        try:
            for d in dirs:
                fd = self.take(d, exclusive, bound, waiting)
                if fd is None:
                    skipped += 1
                else:
                    taken.append(fd)
        except Refused:
            for fd in reversed(taken):
                os.close(fd)
            raise
        self.held.extend(taken)
        return "held skipped=%d" % skipped if skipped else "held"

    def order_case(self, case, root):
        user = os.path.join(root, "user")

        def c(realm):
            return os.path.join(root, "cred", "realms", realm)

        def r(realm):
            return os.path.join(root, "state", "realms", realm)

        if case == "ordered":
            return [user, c("B"), c("a"), c("b"), r("x"), r("y")]
        if case in ("c-out-of-byte-order", "c-twice", "u-after-c", "r-head-before-root",
                    "r-before-c", "r-of-two-chains", "document-beside-r", "two-documents"):
            return None  # each breaks the order or grouping rules
        raise ValueError("no order case " + case)

    # --- commands --------------------------------------------------------

    def do(self, words):
        cmd, args = words[0], words[1:]
        if cmd == "install" and len(args) == 1:
            self.composed = args[0] == "composed"
            return "ok"
        if cmd == "umask" and len(args) == 1:
            os.umask(int(args[0], 8))
            return "ok"
        if cmd in ("guard-try", "hold-try") and len(args) == 1:
            return self.take_set([args[0]], cmd == "guard-try")
        if cmd in ("guard", "hold") and len(args) == 2:
            return self.take_set([args[1]], cmd == "guard", int(args[0]) / 1000.0, True)
        if cmd == "set" and len(args) == 2:
            dirs = self.order_case(args[0], args[1])
            if dirs is None:
                raise unavailable("order")
            return self.take_set(dirs, True)
        if cmd == "realm-guard" and len(args) == 2:
            realm = args[1]
            if realm in ("", ".", "..") or "/" in realm:
                raise unavailable("realm-id")
            name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "".join("%%%02X" % b for b in ch.encode()) for ch in realm)
            if len(name.encode()) > 255:
                raise unavailable("realm-id")
            return self.take_set([os.path.join(args[0], "cred", "realms", name)], True)
        if cmd == "release" and not args:
            while self.held:
                os.close(self.held.pop())
            return "released"
        if cmd == "spawn-linger" and not args:
            child = subprocess.Popen([sys.executable] + sys.argv, stdin=3, stdout=subprocess.PIPE)
            self.children.append(child)
            ready = child.stdout.readline().decode().split()
            return "spawned " + ready[1]
        if cmd == "bind" and len(args) == 2:
            subprocess.run(["mount", "--bind", args[0], args[1]], check=True)
            return "ok"
        return "error unknown command " + " ".join(words)


class Pause:
    """Paces the polls of one take until its deadline; says waiting once."""

    def __init__(self, deadline, waiting):
        self.deadline = deadline
        self.waiting = waiting
        self.pause = 0.001

    def wait(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Refused(IN_PROGRESS)
        if self.waiting:
            say("waiting")
            self.waiting = False
        time.sleep(min(self.pause, left))  # polling for the lock, not ordering
        self.pause = min(2 * self.pause, 0.05)


def say(line):
    print(line, flush=True)


def main():
    helper = Helper()
    say("ready %d v1" % os.getpid())
    for line in sys.stdin:
        words = line.split()
        if not words:
            say("error empty command")
            continue
        try:
            say(helper.do(words))
        except Refused as refusal:
            say(refusal.args[0])
        except Exception as err:  # any other failure fails the row
            say("error %s" % err)


if __name__ == "__main__":
    main()
