#!/usr/bin/env node
// A Host Store SPI store in Node.js (v20, standard library only), served
// as a conform store process (docs/store-process-protocol.md). Certify it
// with:
//
//     conform run --store 'exec:node examples/node-jsonlog/store.js'
//
// The realm is a log of JSON files in $CONFORM_REALM/log, numbered 1, 2, …
// Every change (a commit, an acquire, a renew, a lapse) is one record. A
// process writes a record to a temporary file, fsyncs it, and links it to
// the next free number: link(2) fails when the number is taken, so the
// process reads that record and tries the next. The link is the commit
// point; the directory is fsynced after it. A record is never changed, and
// every process folds the log in number order into the same state, so the
// store meets obligations 4 and 5 at load: a commit record whose token is
// below the highest token acquired before it, or whose previous versions do
// not match, changes nothing, in every scope. The process that wrote it
// reads its outcome there and answers FencedOut or Conflict. Exclusive
// acquires are settled the same way.
//
// EXAMPLE_BUG plants a bug for conform's own tests:
//   ignore-token  a commit record is folded whatever its token (breaks
//                 obligation 5, fencing)
//   torn-batch    a batch of several updates is written as two records,
//                 its first update before the commit-before-point site and
//                 the rest after it (breaks obligation 1, all or nothing,
//                 when the process dies or is held there)
//
// The log's numbers are one realm-wide sequence on the commit path, which
// obligation 8 (independence) rules out for a real store: no commit waits
// for another here, but every commit races for the same next number. This
// is a small example of the protocol, not a store to run a realm on.

'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const BUG = process.env.EXAMPLE_BUG || '';
const REALM = process.env.CONFORM_REALM || '';
const LOG = path.join(REALM, 'log');
const TMP = path.join(REALM, 'tmp');
const RENEW_MS = 10000;
const LEASE_MS = 30000;
const MS = 1000000; // nanoseconds in a millisecond
const KINDS = new Set(['Session', 'Identity', 'Mob', 'Record']);

class StoreError extends Error {
  constructor(wire) {
    super(wire.kind);
    this.wire = wire;
  }
}
const invalid = (detail) => new StoreError({ kind: 'invalid', detail });
const unavailable = (detail) => new StoreError({ kind: 'unavailable', detail });

// ---- the wire ----------------------------------------------------------

function send(msg) {
  fs.writeSync(1, JSON.stringify(msg) + '\n');
}

let nextCall = 0;
const calls = new Map(); // call number -> resolve
let ending = false;

// at is an in-store site: it asks the harness and waits for "go on".
// "sites": false on the request says nothing is armed: skip the call.
function at(req, site, commitId) {
  if (req.sites === false) return Promise.resolve();
  if (ending) return Promise.reject(unavailable('the input ended'));
  const n = nextCall++;
  const p = new Promise((resolve, reject) => {
    calls.set(n, (answer) => (answer && answer.ok ? resolve() : reject(unavailable('the harness stopped the commit at ' + site))));
  });
  send({ call: n, op: 'at', req: req.id, site, commit_id: commitId });
  return p;
}

// ---- validation ----------------------------------------------------------

function checkText(what, s, limit) {
  if (typeof s !== 'string' || s === '') throw invalid(what + ' is empty');
  if (Buffer.byteLength(s, 'utf8') > limit) throw invalid(what + ' is too long');
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) throw invalid(what + ' has a control character');
  }
}

function scopeOf(w) {
  if (!w || !KINDS.has(w.kind)) throw invalid('unknown kind ' + JSON.stringify(w && w.kind));
  checkText('scope name', w.name, 512);
  return { kind: w.kind, name: w.name };
}

const keyOf = (s) => s.kind + '\u0000' + s.name;

// ---- the log and the state it folds into -----------------------------------

const state = {
  pos: 0, // the last record folded
  token: 0, // the highest token issued
  expiry: 0, // the holder's lease expiry, ms on the realm's clock
  offset: 0, // the realm's clock offset, ms
  clock: 0, // the latest time a folded record carries, ms: records of
  // several processes reach the log out of their clocks' order, and the
  // realm's clock never runs back
  scopes: new Map(), // key -> {scope, version, commitId, deleted, start, end, head, rows: Map}
  commits: new Set(),
  outcomes: new Map(), // position -> outcome, for this process's own records
};
const mine = new Set();

const now = () => Date.now() + state.offset;

// fold applies the record at position pos to the state and returns its
// outcome: {ok: result} or {error: wire error}.
function fold(pos, r) {
  if (r.at !== undefined) {
    state.clock = Math.max(state.clock, r.at);
    r = { ...r, at: state.clock };
  }
  switch (r.type) {
    case 'acquire': {
      const live = state.token > 0 && state.expiry > r.at;
      const remaining = live ? state.expiry - r.at : 0;
      if (live && r.mode === 'exclusive') {
        return { error: { kind: 'held', holder: state.token, remaining_ns: remaining * MS } };
      }
      state.token++;
      state.expiry = r.at + LEASE_MS;
      return { ok: { token: state.token, superseded_lease_ns: remaining * MS } };
    }
    case 'renew':
      if (r.token === 0 || r.token > state.token) return { error: { kind: 'invalid', detail: `token ${r.token} was never issued (highest is ${state.token})` } };
      if (r.token < state.token) return { error: { kind: 'fenced_out', current: state.token } };
      state.expiry = r.at + LEASE_MS;
      return { ok: {} };
    case 'lapse':
      if (state.expiry >= r.at) {
        // Every lease recorded so far runs out: the realm's clock jumps
        // past the latest expiry, here and in every process's stamps.
        state.offset += state.expiry - r.at + 1;
        state.clock = state.expiry + 1;
      }
      return { ok: {} };
    case 'commit':
      return foldCommit(r.batch, false);
    case 'commit-rest': // only under EXAMPLE_BUG=torn-batch
      return foldCommit(r.batch, true);
  }
  return { error: { kind: 'invalid', detail: 'unknown record at ' + pos } };
}

function foldCommit(b, rest) {
  if (state.commits.has(b.commit_id) && !rest) return { ok: {} }; // landed before: acts once
  if (b.token === 0 || b.token > state.token) return { error: { kind: 'invalid', detail: `token ${b.token} was never issued (highest is ${state.token})` } };
  if (b.token < state.token && BUG !== 'ignore-token') return { error: { kind: 'fenced_out', current: state.token } };
  for (const u of b.updates) {
    const s = state.scopes.get(keyOf(u.scope));
    const live = s !== undefined && !s.deleted;
    const prev = u.previous === undefined ? null : u.previous;
    if (prev === null && s && s.deleted) return { error: { kind: 'invalid', detail: 'a deleted name is not created again' } };
    if (prev === null && live) return { error: { kind: 'conflict', scope: u.scope, current: s.version } };
    if (prev !== null && !live) return { error: { kind: 'conflict', scope: u.scope, current: null } };
    if (prev !== null && prev !== s.version) return { error: { kind: 'conflict', scope: u.scope, current: s.version } };
  }
  for (const u of b.updates) applyUpdate(b.commit_id, u);
  state.commits.add(b.commit_id);
  return { ok: {} };
}

function applyUpdate(id, u) {
  const key = keyOf(u.scope);
  let s = state.scopes.get(key);
  if (u.delete) {
    s.version = u.next;
    s.commitId = id;
    s.deleted = true;
    s.rows = new Map();
    s.start = s.end;
    s.head = null;
    return;
  }
  if (u.previous === null || u.previous === undefined) {
    s = { scope: u.scope, version: 0, commitId: '', deleted: false, start: 0, end: 0, head: null, rows: new Map() };
    state.scopes.set(key, s);
  }
  const t = u.truncate_after;
  if (t !== null && t !== undefined && t < s.end) {
    for (let i = t; i < s.end; i++) s.rows.delete(i);
    s.end = t;
    s.start = Math.min(s.start, s.end);
  }
  const d = u.drop_before;
  if (d !== null && d !== undefined && d > s.start) {
    const start = Math.min(d, s.end);
    for (let i = s.start; i < start; i++) s.rows.delete(i);
    s.start = start;
  }
  for (const row of u.append || []) s.rows.set(s.end++, row);
  if (u.head !== null && u.head !== undefined) s.head = u.head;
  s.version = u.next;
  s.commitId = id;
}

// refresh folds every record written since the last refresh.
function refresh() {
  for (;;) {
    let raw;
    try {
      raw = fs.readFileSync(path.join(LOG, String(state.pos + 1)), 'utf8');
    } catch (e) {
      if (e.code === 'ENOENT') return;
      throw unavailable('read the log: ' + e.message);
    }
    state.pos++;
    const out = fold(state.pos, JSON.parse(raw));
    if (mine.has(state.pos)) state.outcomes.set(state.pos, out);
  }
}

let tmpSeq = 0;

// append writes r as the next record, durably, and returns its outcome.
function append(r) {
  const tmp = path.join(TMP, `${process.pid}-${tmpSeq++}`);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, JSON.stringify(r));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  for (;;) {
    refresh();
    const pos = state.pos + 1;
    try {
      fs.linkSync(tmp, path.join(LOG, String(pos))); // the commit point
    } catch (e) {
      if (e.code === 'EEXIST') continue; // taken: fold it, try the next
      fs.rmSync(tmp, { force: true });
      throw unavailable('link the record: ' + e.message);
    }
    fs.rmSync(tmp, { force: true });
    const dir = fs.openSync(LOG, 'r');
    try {
      fs.fsyncSync(dir);
    } catch (e) {
      throw new StoreError({ kind: 'indeterminate', detail: 'fsync the log: ' + e.message });
    } finally {
      fs.closeSync(dir);
    }
    mine.add(pos);
    refresh();
    const out = state.outcomes.get(pos);
    state.outcomes.delete(pos);
    mine.delete(pos);
    return out;
  }
}

function outcome(out) {
  if (out.error) throw new StoreError(out.error);
  return out.ok;
}

// ---- the operations ----------------------------------------------------------

const ops = {
  acquire_fence(req) {
    if (req.mode !== 'exclusive' && req.mode !== 'takeover') throw invalid('unknown mode ' + req.mode);
    refresh();
    return outcome(append({ type: 'acquire', mode: req.mode, at: now() }));
  },
  renew_fence(req) {
    refresh();
    return outcome(append({ type: 'renew', token: req.token || 0, at: now() }));
  },
  lapse_fence_leases() {
    refresh();
    return outcome(append({ type: 'lapse', at: now() }));
  },
  load_head(req) {
    const sc = scopeOf(req.scope);
    refresh();
    const s = state.scopes.get(keyOf(sc));
    if (!s || s.deleted) return { head: null };
    return { head: { version: s.version, commit_id: s.commitId, head: s.head || '' } };
  },
  list_heads(req) {
    if (!KINDS.has(req.kind)) throw invalid('unknown kind ' + req.kind);
    const limit = req.limit || 0;
    if (limit <= 0) throw invalid(`limit ${limit} is not positive`);
    const after = req.after === undefined || req.after === null ? null : req.after;
    if (after !== null) checkText('after', after, 512);
    const afterB = after === null ? null : Buffer.from(after, 'utf8');
    refresh();
    const names = [];
    for (const s of state.scopes.values()) {
      if (s.scope.kind !== req.kind || s.deleted) continue;
      const b = Buffer.from(s.scope.name, 'utf8');
      if (afterB === null || Buffer.compare(b, afterB) > 0) names.push([b, s]);
    }
    names.sort((x, y) => Buffer.compare(x[0], y[0]));
    const page = names.slice(0, limit).map(([, s]) => ({ name: s.scope.name, version: s.version, commit_id: s.commitId, head: s.head || '' }));
    return { heads: page, next: names.length > limit ? page[page.length - 1].name : null };
  },
  read_rows(req) {
    const sc = scopeOf(req.scope);
    const from = req.from || 0;
    const limit = req.limit || 0;
    if (limit <= 0) throw invalid(`limit ${limit} is not positive`);
    refresh();
    const s = state.scopes.get(keyOf(sc));
    if (!s || s.deleted) return { rows: [] };
    if (from < s.start) throw invalid(`from ${from} is below the first visible row ${s.start}`);
    const rows = [];
    for (let i = from; i < s.end && rows.length < limit; i++) rows.push({ index: i, data: s.rows.get(i) });
    return { rows };
  },
  async commit(req) {
    const b = req.batch || {};
    checkText('commit id', b.commit_id, 128);
    if (!Array.isArray(b.updates) || b.updates.length === 0) throw invalid('a batch with no update');
    for (const u of b.updates) scopeOf(u.scope);
    await at(req, 'commit-locked', b.commit_id);
    if (BUG === 'torn-batch' && b.updates.length > 1) {
      outcome(append({ type: 'commit', batch: { ...b, updates: b.updates.slice(0, 1) } }));
      await at(req, 'commit-before-point', b.commit_id);
      outcome(append({ type: 'commit-rest', batch: { ...b, updates: b.updates.slice(1) } }));
      await at(req, 'commit-after-point', b.commit_id);
      return {};
    }
    await at(req, 'commit-before-point', b.commit_id);
    // Rows and heads stay base64 in the record: the store never reads them.
    const out = append({ type: 'commit', batch: b });
    outcome(out);
    await at(req, 'commit-after-point', b.commit_id);
    return {};
  },
};

async function serve(req) {
  try {
    const op = ops[req.op];
    if (!op) throw invalid('unknown op ' + req.op);
    send({ id: req.id, ok: await op(req) });
  } catch (e) {
    if (e instanceof StoreError) {
      send({ id: req.id, error: e.wire });
    } else {
      process.stderr.write(`store.js: ${req.op}: ${e && e.stack}\n`);
      send({ id: req.id, error: { kind: 'unavailable', detail: String(e) } });
    }
  }
}

function main() {
  if (!REALM) {
    process.stderr.write('store.js: CONFORM_REALM names no realm\n');
    process.exit(1);
  }
  fs.mkdirSync(LOG, { recursive: true });
  fs.mkdirSync(TMP, { recursive: true });
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => {
    const msg = JSON.parse(line);
    if (msg.call !== undefined) {
      const resolve = calls.get(msg.call);
      calls.delete(msg.call);
      if (resolve) resolve(msg);
    } else if (msg.op === 'hello') {
      send({ id: msg.id, ok: { version: 1, store: 'node-jsonlog', timing: { renew_interval_ns: RENEW_MS * MS, lease_ns: LEASE_MS * MS } } });
    } else {
      serve(msg);
    }
  });
  rl.on('close', () => {
    ending = true; // the input ended: stop every commit waiting at a site
    for (const resolve of calls.values()) resolve(null);
    calls.clear();
  });
}

main();
