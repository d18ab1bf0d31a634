#!/usr/bin/env python3
"""A Host Store SPI store in Python 3 over the standard sqlite3 module,
served as a conform store process (docs/store-process-protocol.md).

Certify it with:

    conform run --store 'exec:python3 examples/python-sqlite/store.py'

The realm is one SQLite file, realm.db, in the directory $CONFORM_REALM,
in WAL mode with synchronous=FULL: a commit answered ok survives SIGKILL.
The layout and the placement of the in-store sites follow conform's Go
sqlite store (stores/sqlite): no SQLite lock is held at any site, so a
commit held there blocks no other scope's commit.

EXAMPLE_BUG plants a bug for conform's own tests:
  ignore-token  commit never compares the batch's token with the fence
                (breaks obligation 5, fencing)
  torn-batch    commit applies a batch's first update in a transaction of
                its own, before the commit point (breaks obligation 1,
                all or nothing, when it dies or is held there)
"""

import base64
import json
import os
import sqlite3
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

BUG = os.environ.get("EXAMPLE_BUG", "")
REALM = os.environ.get("CONFORM_REALM", "")
DB = os.path.join(REALM, "realm.db")

RENEW_NS = 10 * 10**9
LEASE_NS = 30 * 10**9
KINDS = {"Session": 1, "Identity": 2, "Mob": 3, "Record": 4}
SITES = ("commit-locked", "commit-before-point", "commit-after-point")

SCHEMA = """
CREATE TABLE IF NOT EXISTS scopes (
    kind INTEGER NOT NULL, name BLOB NOT NULL, version INTEGER NOT NULL,
    commit_id TEXT NOT NULL, deleted INTEGER NOT NULL,
    start_idx INTEGER NOT NULL, end_idx INTEGER NOT NULL, head BLOB,
    PRIMARY KEY (kind, name));
CREATE TABLE IF NOT EXISTS rows (
    kind INTEGER NOT NULL, name BLOB NOT NULL, idx INTEGER NOT NULL, data BLOB,
    PRIMARY KEY (kind, name, idx));
CREATE TABLE IF NOT EXISTS commits (commit_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fence (id INTEGER PRIMARY KEY, token INTEGER NOT NULL, lease_expiry INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS clock (id INTEGER PRIMARY KEY, offset_ns INTEGER NOT NULL);
INSERT OR IGNORE INTO fence (id, token, lease_expiry) VALUES (1, 0, 0);
INSERT OR IGNORE INTO clock (id, offset_ns) VALUES (1, 0);
"""


class StoreError(Exception):
    """One of the contract's six errors, as its wire object."""

    def __init__(self, kind, **fields):
        super().__init__(kind)
        self.wire = dict(kind=kind, **fields)


def invalid(detail):
    return StoreError("invalid", detail=detail)


def unavailable(detail):
    return StoreError("unavailable", detail=detail)


class Stopped(Exception):
    """The harness stopped a commit at a site, or the input ended."""


# ---- the wire ----------------------------------------------------------

out_lock = threading.Lock()


def send(msg):
    line = json.dumps(msg, separators=(",", ":")) + "\n"
    with out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


calls_lock = threading.Lock()
calls = {}  # call number -> [event, answer]
next_call = [0]
ending = threading.Event()


def at(req, site, commit_id):
    """An in-store site: ask the harness, and wait for it to say go on.
    With "sites": false the harness has nothing armed: skip the call."""
    if req.get("sites") is False:
        return
    with calls_lock:
        if ending.is_set():
            raise Stopped("the input ended")
        n = next_call[0]
        next_call[0] += 1
        slot = [threading.Event(), None]
        calls[n] = slot
    send({"call": n, "op": "at", "req": req["id"], "site": site, "commit_id": commit_id})
    slot[0].wait()
    if slot[1] is None or "error" in slot[1]:
        raise Stopped("the harness stopped the commit at " + site)


def b64(data):
    return base64.b64encode(bytes(data)).decode("ascii")


def unb64(s):
    return base64.b64decode(s, validate=True)


# ---- validation --------------------------------------------------------

def control(s):
    return any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in s)


def check_text(what, s, limit):
    if not isinstance(s, str) or not s:
        raise invalid(what + " is empty")
    if len(s.encode("utf-8")) > limit or control(s):
        raise invalid("%s %r is too long or has a control character" % (what, s))


def scope_of(w):
    kind = KINDS.get(w.get("kind"))
    if kind is None:
        raise invalid("unknown kind %r" % w.get("kind"))
    check_text("scope name", w.get("name"), 512)
    return kind, w["name"].encode("utf-8")


# ---- SQLite ------------------------------------------------------------

local = threading.local()


def conn():
    c = getattr(local, "conn", None)
    if c is None:
        c = sqlite3.connect(DB, timeout=10, isolation_level=None, check_same_thread=False)
        c.execute("PRAGMA busy_timeout = 10000")
        c.execute("PRAGMA synchronous = FULL")
        local.conn = c
    return c


def init_db():
    c = conn()
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("BEGIN IMMEDIATE")
    try:
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                c.execute(stmt)
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise


class Tx:
    """A transaction: BEGIN IMMEDIATE for a writer, BEGIN for a reader. An
    error before COMMIT is unavailable (nothing applied); COMMIT failing is
    indeterminate."""

    def __init__(self, write):
        self.c = conn()
        self.write = write

    def __enter__(self):
        try:
            self.c.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")
        except sqlite3.Error as e:
            raise unavailable("begin: %s" % e)
        return self.c

    def __exit__(self, typ, val, tb):
        if typ is not None:
            try:
                self.c.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if issubclass(typ, sqlite3.Error):
                raise unavailable(str(val))
            return False
        try:
            self.c.execute("COMMIT")
        except sqlite3.Error as e:
            raise StoreError("indeterminate", detail="commit: %s" % e)
        return False


def read_fence(c):
    token, expiry, offset = c.execute(
        "SELECT f.token, f.lease_expiry, c.offset_ns FROM fence f, clock c WHERE f.id = 1 AND c.id = 1").fetchone()
    return token, expiry, offset, time.time_ns() + offset


# ---- the operations ----------------------------------------------------

def acquire_fence(req):
    mode = req.get("mode")
    if mode not in ("exclusive", "takeover"):
        raise invalid("unknown mode %r" % mode)
    with Tx(True) as c:
        token, expiry, _, now = read_fence(c)
        live = token > 0 and expiry > now
        remaining = expiry - now if live else 0
        if live and mode == "exclusive":
            raise StoreError("held", holder=token, remaining_ns=remaining)
        c.execute("UPDATE fence SET token = ?, lease_expiry = ? WHERE id = 1", (token + 1, now + LEASE_NS))
    return {"token": token + 1, "superseded_lease_ns": remaining}


def renew_fence(req):
    t = req.get("token", 0)
    with Tx(True) as c:
        token, _, _, now = read_fence(c)
        if t == 0 or t > token:
            raise invalid("token %d was never issued (highest is %d)" % (t, token))
        if t < token:
            raise StoreError("fenced_out", current=token)
        c.execute("UPDATE fence SET lease_expiry = ? WHERE id = 1", (now + LEASE_NS,))
    return {}


def lapse_fence_leases(req):
    with Tx(True) as c:
        _, expiry, offset, now = read_fence(c)
        if expiry >= now:
            c.execute("UPDATE clock SET offset_ns = ? WHERE id = 1", (offset + expiry - now + 10**6,))
    return {}


def load_head(req):
    kind, name = scope_of(req.get("scope") or {})
    with Tx(False) as c:
        r = c.execute("SELECT version, commit_id, head FROM scopes WHERE kind = ? AND name = ? AND deleted = 0",
                      (kind, name)).fetchone()
    if r is None:
        return {"head": None}
    return {"head": {"version": r[0], "commit_id": r[1], "head": b64(r[2] or b"")}}


def list_heads(req):
    kind = KINDS.get(req.get("kind"))
    if kind is None:
        raise invalid("unknown kind %r" % req.get("kind"))
    limit = req.get("limit", 0)
    if limit <= 0:
        raise invalid("limit %d is not positive" % limit)
    after = req.get("after")
    if after is not None:
        check_text("after", after, 512)
    after = after.encode("utf-8") if after is not None else b""
    with Tx(False) as c:
        rs = c.execute(
            "SELECT name, version, commit_id, head FROM scopes WHERE kind = ? AND deleted = 0 AND name > ? "
            "ORDER BY name LIMIT ?", (kind, after, limit + 1)).fetchall()
    heads = [{"name": bytes(r[0]).decode("utf-8"), "version": r[1], "commit_id": r[2], "head": b64(r[3] or b"")}
             for r in rs[:limit]]
    nxt = heads[-1]["name"] if len(rs) > limit else None
    return {"heads": heads, "next": nxt}


def read_rows(req):
    kind, name = scope_of(req.get("scope") or {})
    start, limit = req.get("from", 0), req.get("limit", 0)
    if limit <= 0:
        raise invalid("limit %d is not positive" % limit)
    with Tx(False) as c:
        s = c.execute("SELECT start_idx, end_idx, deleted FROM scopes WHERE kind = ? AND name = ?",
                      (kind, name)).fetchone()
        if s is None or s[2]:
            return {"rows": []}
        if start < s[0]:
            raise invalid("from %d is below the first visible row %d" % (start, s[0]))
        rs = c.execute("SELECT idx, data FROM rows WHERE kind = ? AND name = ? AND idx >= ? AND idx < ? "
                       "ORDER BY idx LIMIT ?", (kind, name, start, s[1], limit)).fetchall()
    return {"rows": [{"index": r[0], "data": b64(r[1] or b"")} for r in rs]}


def parse_batch(req):
    b = req.get("batch") or {}
    check_text("commit id", b.get("commit_id"), 128)
    ups = []
    for u in b.get("updates") or []:
        kind, name = scope_of(u.get("scope") or {})
        head = u.get("head")
        ups.append(dict(kind=kind, name=name, scope=u["scope"], previous=u.get("previous"), next=u["next"],
                        head=None if head is None else unb64(head),
                        append=[unb64(a) for a in u.get("append") or []],
                        truncate_after=u.get("truncate_after"), drop_before=u.get("drop_before"),
                        delete=bool(u.get("delete"))))
    if not ups:
        raise invalid("a batch with no update")
    return b["commit_id"], b.get("token", 0), ups


def check(c, cid, token, ups):
    """Returns True when the commit id landed before; raises the refusal."""
    if c.execute("SELECT 1 FROM commits WHERE commit_id = ?", (cid,)).fetchone():
        return True
    current = c.execute("SELECT token FROM fence WHERE id = 1").fetchone()[0]
    if BUG != "ignore-token":
        if token == 0 or token > current:
            raise invalid("token %d was never issued (highest is %d)" % (token, current))
        if token < current:
            raise StoreError("fenced_out", current=current)
    for u in ups:
        s = c.execute("SELECT version, deleted, start_idx, end_idx FROM scopes WHERE kind = ? AND name = ?",
                      (u["kind"], u["name"])).fetchone()
        u["state"] = s
        live = s is not None and not s[1]
        if u["previous"] is None and s is not None and s[1]:
            raise invalid("%r was deleted; its name is not created again" % u["scope"])
        if u["previous"] is None and live:
            raise StoreError("conflict", scope=u["scope"], current=s[0])
        if u["previous"] is not None and not live:
            raise StoreError("conflict", scope=u["scope"], current=None)
        if u["previous"] is not None and u["previous"] != s[0]:
            raise StoreError("conflict", scope=u["scope"], current=s[0])
    return False


def write(c, cid, u):
    kind, name, nxt = u["kind"], u["name"], u["next"]
    if u["delete"]:
        c.execute("DELETE FROM rows WHERE kind = ? AND name = ?", (kind, name))
        c.execute("UPDATE scopes SET version = ?, commit_id = ?, deleted = 1, start_idx = end_idx, head = NULL "
                  "WHERE kind = ? AND name = ?", (nxt, cid, kind, name))
        return
    creates = u["previous"] is None
    start, end = (0, 0) if creates else (u["state"][2], u["state"][3])
    t = u["truncate_after"]
    if t is not None and t < end:
        c.execute("DELETE FROM rows WHERE kind = ? AND name = ? AND idx >= ?", (kind, name, t))
        end = t
        start = min(start, end)
    d = u["drop_before"]
    if d is not None and d > start:
        start = min(d, end)
        c.execute("DELETE FROM rows WHERE kind = ? AND name = ? AND idx < ?", (kind, name, start))
    for data in u["append"]:
        c.execute("INSERT INTO rows (kind, name, idx, data) VALUES (?, ?, ?, ?)", (kind, name, end, data))
        end += 1
    if creates:
        c.execute("INSERT INTO scopes (kind, name, version, commit_id, deleted, start_idx, end_idx, head) "
                  "VALUES (?, ?, ?, ?, 0, ?, ?, ?)", (kind, name, nxt, cid, start, end, u["head"]))
    elif u["head"] is not None:
        c.execute("UPDATE scopes SET version = ?, commit_id = ?, start_idx = ?, end_idx = ?, head = ? "
                  "WHERE kind = ? AND name = ?", (nxt, cid, start, end, u["head"], kind, name))
    else:
        c.execute("UPDATE scopes SET version = ?, commit_id = ?, start_idx = ?, end_idx = ? "
                  "WHERE kind = ? AND name = ?", (nxt, cid, start, end, kind, name))


def commit(req):
    cid, token, ups = parse_batch(req)
    at(req, "commit-locked", cid)
    # The precheck: a read snapshot refuses early without the write lock.
    with Tx(False) as c:
        if check(c, cid, token, ups):
            return {}
    if BUG == "torn-batch" and len(ups) > 1:
        # The first update lands in a transaction of its own, before the
        # commit point: a death there leaves the batch torn.
        with Tx(True) as c:
            if check(c, cid, token, ups):
                return {}
            write(c, cid, ups[0])
        at(req, "commit-before-point", cid)
        with Tx(True) as c:
            for u in ups[1:]:
                write(c, cid, u)
            c.execute("INSERT INTO commits (commit_id) VALUES (?)", (cid,))
    else:
        at(req, "commit-before-point", cid)
        with Tx(True) as c:  # checks again: another process may have committed since
            if check(c, cid, token, ups):
                return {}
            for u in ups:
                write(c, cid, u)
            c.execute("INSERT INTO commits (commit_id) VALUES (?)", (cid,))
    at(req, "commit-after-point", cid)
    return {}


OPS = {
    "acquire_fence": acquire_fence,
    "renew_fence": renew_fence,
    "load_head": load_head,
    "list_heads": list_heads,
    "read_rows": read_rows,
    "commit": commit,
    "lapse_fence_leases": lapse_fence_leases,
}


def serve(req):
    try:
        op = OPS.get(req.get("op"))
        if op is None:
            raise invalid("unknown op %r" % req.get("op"))
        send({"id": req["id"], "ok": op(req)})
    except StoreError as e:
        send({"id": req["id"], "error": e.wire})
    except Stopped as e:
        send({"id": req["id"], "error": {"kind": "unavailable", "detail": str(e)}})
    except Exception as e:  # a bug here: say so, as unavailable
        print("store.py: %s: %r" % (req.get("op"), e), file=sys.stderr, flush=True)
        send({"id": req["id"], "error": {"kind": "unavailable", "detail": repr(e)}})


def main():
    if not REALM:
        print("store.py: CONFORM_REALM names no realm", file=sys.stderr)
        return 1
    init_db()
    pool = ThreadPoolExecutor(max_workers=64)
    for line in sys.stdin:
        msg = json.loads(line)
        if "call" in msg:
            with calls_lock:
                slot = calls.pop(msg["call"], None)
            if slot is not None:
                slot[1] = msg
                slot[0].set()
        elif msg.get("op") == "hello":
            send({"id": msg["id"], "ok": {"version": 1, "store": "python-sqlite" + ("+" + BUG if BUG else ""),
                                          "timing": {"renew_interval_ns": RENEW_NS, "lease_ns": LEASE_NS}}})
        else:
            pool.submit(serve, msg)
    with calls_lock:  # the input ended: stop every commit waiting at a site
        ending.set()
        for slot in calls.values():
            slot[0].set()
        calls.clear()
    pool.shutdown(wait=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
