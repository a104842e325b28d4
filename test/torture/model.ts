import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Rng } from './rng.js';

/**
 * What the torture scenarios share: random records, a client-side model of each session that
 * predicts the seq every pipelined operation will get, the ledger of what was acknowledged,
 * and the check that a store still holds every acknowledged thing after a crash.
 */

export type Rec = { kind: string } & Record<string, unknown>;
export type Stored = Rec & { seq: number; ts: string };

/** A failed torture invariant: the message says what was lost or wrong, and where. */
export class TortureFailure extends Error {
  override name = 'TortureFailure';
}

export function fail(message: string): never {
  throw new TortureFailure(message);
}

// ---------------------------------------------------------------------------------------------
// Random records

/**
 * Characters of generated text. No uppercase letters, no 'b', '-', '_' or ':' — so no
 * well-known credential pattern (sk-…, ghp_…, AKIA…, bearer …, eyJ…, scheme://user:pw@) can
 * ever form and be redacted, which would make a stored record legitimately differ from the
 * one sent. Multi-byte, astral, combining and control characters are in.
 */
const ALPHABET = [
  ...'acdefghijlmnopqrstuvwxyz0123456789        .,!?"\\/\n\t',
  'é', 'ß', 'ñ', 'Ω', '中', '文', '😀', '\u0301', '\u2028', '\u0001', '\u007f',
];

export function text(rng: Rng, min = 0, max = 60): string {
  const n = rng.range(min, max);
  let s = '';
  for (let i = 0; i < n; i++) s += rng.pick(ALPHABET);
  return s;
}

/** Mostly short, sometimes a few KB, rarely tens of KB. */
export function body(rng: Rng): string {
  const r = rng.next();
  if (r < 0.85) return text(rng, 0, 80);
  if (r < 0.99) return text(rng, 200, 2000);
  return 'z'.repeat(rng.range(20_000, 60_000)) + text(rng, 0, 20);
}

const KEYS = ['a', 'n', 'list', 'obj', 'x', 'v', 'ok', 'deep'];

export function jsonValue(rng: Rng, depth = 0): unknown {
  const r = rng.int(depth >= 3 ? 5 : 7);
  switch (r) {
    case 0: return rng.range(-1_000_000_000, 1_000_000_000);
    case 1: return rng.range(-4000, 4000) / 8 || 0.5; // exact in binary, never -0
    case 2: return rng.chance(0.5);
    case 3: return null;
    case 4: return text(rng, 0, 30);
    case 5: return Array.from({ length: rng.int(4) }, () => jsonValue(rng, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(4); i > 0; i--) o[rng.pick(KEYS)] = jsonValue(rng, depth + 1);
      return o;
    }
  }
}

let callCounter = 0;

/** One protocol-valid record: a message (user, assistant with tool calls, tool), an event or an interruption. */
export function record(rng: Rng): Rec {
  const r = rng.next();
  if (r < 0.55) {
    const role = rng.pick(['user', 'assistant', 'system', 'observation']);
    const message: Record<string, unknown> = { role, content: rng.chance(0.1) ? [{ type: 'text', text: body(rng) }] : body(rng) };
    if (rng.chance(0.05)) message.providerMeta = jsonValue(rng);
    return { kind: 'message', message };
  }
  if (r < 0.7) {
    const id = `c${++callCounter}`;
    return {
      kind: 'message',
      message: { role: 'assistant', content: null, toolCalls: [{ id, name: 'run', arguments: JSON.stringify({ cmd: text(rng, 1, 40) }) }] },
    };
  }
  if (r < 0.8) return { kind: 'message', message: { role: 'tool', content: body(rng), toolCallId: `c${rng.range(1, callCounter + 1)}` } };
  if (r < 0.95) return { kind: 'event', type: `t.${rng.pick(['started', 'progress', 'done'])}`, payload: jsonValue(rng) };
  const rec: Rec = { kind: 'interruption', reason: text(rng, 1, 30) || 'x', phase: rng.pick(['providerStream', 'executingTools']) };
  if (rng.chance(0.5)) rec.assistantText = text(rng, 0, 50);
  return rec;
}

/**
 * A batch: mostly 1–8 records, sometimes dozens; `big` makes it a batch of about a megabyte (a
 * SIGKILL tears only a long write). Strings stay below 256 KiB, where a store may keep them
 * out of line as blobs (work in progress elsewhere in the tree): the records read back as sent.
 */
export function batch(rng: Rng, opts: { big?: boolean } = {}): Rec[] {
  if (opts.big) {
    return Array.from({ length: rng.range(6, 10) }, () => ({ kind: 'event', type: 't.blob', payload: { x: 'q'.repeat(rng.range(100_000, 160_000)) } }));
  }
  const n = rng.chance(0.9) ? rng.range(1, 8) : rng.range(9, 60);
  return Array.from({ length: n }, () => record(rng));
}

/** Equal as JSON values (member order is not preserved by the store: protocol README 5.1). */
export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}

/** A stored record without what the store adds: seq, ts, and turnId while a turn is pending. */
export function strip(r: Stored): Rec {
  const { seq: _s, ts: _t, turnId: _id, ...rest } = r;
  return rest as Rec;
}

// ---------------------------------------------------------------------------------------------
// The client-side model of a session: predicts seqs of pipelined operations

export type TurnView = { status: 'starting' } | { status: 'active' | 'retryable'; turnId: string };

export type Op =
  | { type: 'append'; sessionId: string; records: Rec[]; firstSeq: number }
  | { type: 'turn'; sessionId: string; seq: number; method: 'turn/start'; params: { sessionId: string; kind: 'user' | 'background' } }
  | {
    type: 'turn'; sessionId: string; seq: number; method: 'turn/setPhase' | 'turn/fail' | 'turn/resume' | 'turn/finish';
    params: { sessionId: string; turnId: string; phase?: string; error?: string; outcome?: string };
  }
  | { type: 'compact'; sessionId: string; throughSeq: number; summary: string };

/**
 * Per session, requests take effect in arrival order (protocol README 3.6), so a client that
 * knows every operation it sent knows the seq each will get. The model is reset from the
 * store after every crash.
 */
export class SessionModel {
  constructor(
    readonly id: string,
    /** Seq of the last record once everything sent so far is committed. */
    public lastSeq: number,
    /** First seq of the active journal: 1, or the latest checkpoint's (compaction's lower bound). */
    public firstSeq: number,
    public turn: TurnView | null,
  ) {}

  static fromOpen(id: string, lastSeq: number, firstSeq: number, turn: { turnId: string; status: string } | null): SessionModel {
    const pending = turn && (turn.status === 'active' || turn.status === 'retryable')
      ? { status: turn.status as 'active' | 'retryable', turnId: turn.turnId } : null;
    return new SessionModel(id, lastSeq, firstSeq, pending);
  }

  /** The next operation on this session, with the model advanced as if it will succeed. */
  plan(rng: Rng, opts: { big?: boolean; compactP?: number; turnP?: number } = {}): Op {
    if (opts.big) {
      const records = batch(rng, { big: true });
      const op: Op = { type: 'append', sessionId: this.id, records, firstSeq: this.lastSeq + 1 };
      this.lastSeq += records.length;
      return op;
    }
    const r = rng.next();
    const compactP = opts.compactP ?? 0.05;
    const turnP = opts.turnP ?? 0.2;
    if (r < compactP && this.lastSeq >= 1) {
      const lo = Math.max(this.firstSeq, 1);
      const throughSeq = rng.range(lo, this.lastSeq);
      this.firstSeq = throughSeq;
      return { type: 'compact', sessionId: this.id, throughSeq, summary: `summary ${text(rng, 1, 40)}` };
    }
    if (r < compactP + turnP) {
      const t = this.turnOp(rng);
      if (t) return t;
    }
    const records = batch(rng);
    const op: Op = { type: 'append', sessionId: this.id, records, firstSeq: this.lastSeq + 1 };
    this.lastSeq += records.length;
    return op;
  }

  private turnOp(rng: Rng): Op | undefined {
    const sessionId = this.id;
    const t = this.turn;
    if (t === null) {
      this.turn = { status: 'starting' };
      return { type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/start', params: { sessionId, kind: rng.pick(['user', 'background'] as const) } };
    }
    if (t.status === 'starting') return undefined; // its id is not known until it is answered
    const { turnId } = t;
    const r = rng.next();
    if (t.status === 'retryable') {
      if (r < 0.7) {
        this.turn = { status: 'active', turnId };
        return { type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/resume', params: { sessionId, turnId } };
      }
      this.turn = null;
      return { type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/finish', params: { sessionId, turnId, outcome: 'abandoned' } };
    }
    if (r < 0.4) {
      return {
        type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/setPhase',
        params: { sessionId, turnId, phase: rng.pick(['compacting', 'providerStream', 'executingTools']) },
      };
    }
    if (r < 0.55) {
      this.turn = { status: 'retryable', turnId };
      return { type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/fail', params: { sessionId, turnId, error: `rate limited ${rng.int(100)}` } };
    }
    if (r < 0.6) return { type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/resume', params: { sessionId, turnId } };
    this.turn = null;
    return {
      type: 'turn', sessionId, seq: ++this.lastSeq, method: 'turn/finish',
      params: { sessionId, turnId, outcome: rng.pick(['completed', 'completed', 'interrupted', 'terminalFailure', 'abandoned']) },
    };
  }

  /** A turn/start was answered: later turn operations can name it. */
  started(turnId: string): void {
    if (this.turn?.status === 'starting') this.turn = { status: 'active', turnId };
  }
}

// ---------------------------------------------------------------------------------------------
// The ledger: what was acknowledged

export interface TurnAck { seq: number; turnId: string; event: string; phase?: string; outcome?: string }

export class SessionLedger {
  /** Every acknowledged record by seq, exactly as sent. */
  readonly records = new Map<number, Rec>();
  readonly turns: TurnAck[] = [];
  readonly compactions: Array<{ generation: number; checkpointSeq: number }> = [];
  /** Batches whose outcome is unknown (Uncertain): on disk whole or not at all. */
  readonly maybe: Array<{ firstSeq: number; records: Rec[] }> = [];
  maxSeq = 0;
}

export class Ledger {
  readonly sessions = new Map<string, SessionLedger>();
  acked = 0;

  session(id: string): SessionLedger {
    let s = this.sessions.get(id);
    if (!s) this.sessions.set(id, (s = new SessionLedger()));
    return s;
  }

  /** An answered operation: checks the answer against the model's prediction and records it. */
  ack(op: Op, result: unknown): void {
    const s = this.session(op.sessionId);
    this.acked += 1;
    if (op.type === 'append') {
      const r = result as { firstSeq: number; lastSeq: number };
      const want = op.firstSeq + op.records.length - 1;
      if (r.firstSeq !== op.firstSeq || r.lastSeq !== want) {
        fail(`session ${op.sessionId}: append answered ${r.firstSeq}..${r.lastSeq}, expected ${op.firstSeq}..${want} (arrival order)`);
      }
      op.records.forEach((rec, i) => s.records.set(op.firstSeq + i, rec));
      s.maxSeq = Math.max(s.maxSeq, r.lastSeq);
    } else if (op.type === 'turn') {
      const turnId = op.method === 'turn/start' ? (result as { turnId: string }).turnId : op.params.turnId;
      const event = op.method.slice('turn/'.length).replace('setPhase', 'phase');
      s.turns.push({
        seq: op.seq, turnId, event,
        ...(op.method === 'turn/setPhase' ? { phase: op.params.phase } : {}),
        ...(op.method === 'turn/finish' ? { outcome: op.params.outcome } : {}),
      });
      s.maxSeq = Math.max(s.maxSeq, op.seq);
    } else {
      const r = result as { generation: number; checkpointSeq: number };
      if (r.checkpointSeq !== op.throughSeq) fail(`session ${op.sessionId}: compaction answered checkpointSeq ${r.checkpointSeq}, asked ${op.throughSeq}`);
      s.compactions.push({ generation: r.generation, checkpointSeq: r.checkpointSeq });
    }
  }

  /** An operation whose outcome is unknown (an Uncertain answer, or no answer before a crash). */
  maybe(op: Op): void {
    if (op.type === 'append') this.session(op.sessionId).maybe.push({ firstSeq: op.firstSeq, records: op.records });
  }
}

// ---------------------------------------------------------------------------------------------
// Checking a store against the ledger

export interface OpenedView {
  lastSeq: number;
  recovered?: { bytes: number; evidence: string };
  turn?: { turnId: string; status: string } | null;
}

/** The few calls a check needs, over the binary (JSON-RPC) or the store library. */
export interface StoreView {
  root: string;
  open(sessionId: string): Promise<OpenedView>;
  read(sessionId: string, afterSeq: number, generation?: number): Promise<{ records: Stored[]; nextAfterSeq: number | null }>;
  history(sessionId: string): Promise<Array<{ generation: number; throughSeq: number }>>;
}

export interface CheckStats {
  records: number;
  turns: number;
  compactions: number;
  recovered: number;
}

export function newCheckStats(): CheckStats {
  return { records: 0, turns: 0, compactions: 0, recovered: 0 };
}

export function addStats(into: CheckStats, s: CheckStats): void {
  into.records += s.records;
  into.turns += s.turns;
  into.compactions += s.compactions;
  into.recovered += s.recovered;
}

async function readAll(view: StoreView, id: string, generation?: number): Promise<Stored[]> {
  const out: Stored[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await view.read(id, afterSeq, generation);
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    if (page.nextAfterSeq <= afterSeq) fail(`session ${id}: read did not advance past ${afterSeq}`);
    afterSeq = page.nextAfterSeq;
  }
}

/** One journal's records: a checkpoint only first, then seqs one apart. */
function checkRun(id: string, label: string, recs: Stored[]): void {
  recs.forEach((r, i) => {
    if (r.kind === 'checkpoint' && i !== 0) fail(`session ${id} ${label}: checkpoint at position ${i}`);
    if (i > 0 && r.seq !== (recs[i - 1] as Stored).seq + 1) fail(`session ${id} ${label}: seq ${(recs[i - 1] as Stored).seq} followed by ${r.seq}`);
    if (i === 0 && r.kind !== 'checkpoint' && r.seq !== 1) fail(`session ${id} ${label}: starts at seq ${r.seq} without a checkpoint`);
  });
}

/**
 * Opens a session for writing (which recovers a torn tail) and checks it against what was
 * acknowledged: every acknowledged record present and identical, turn transitions and
 * compactions present, seqs gapless across the archives and the active journal, an uncertain
 * batch whole or absent, recovered tails kept as evidence under recovery/.
 */
export async function checkSession(view: StoreView, id: string, ledger: SessionLedger | undefined): Promise<{ stats: CheckStats; opened: OpenedView; active: Stored[] }> {
  const stats = newCheckStats();
  const opened = await view.open(id);
  if (opened.recovered) {
    stats.recovered += 1;
    const { bytes, evidence } = opened.recovered;
    if (!evidence.startsWith(`recovery${path.sep}`)) fail(`session ${id}: evidence ${evidence} is not under recovery/`);
    const st = fs.statSync(path.join(view.root, evidence), { throwIfNoEntry: false });
    if (!st) fail(`session ${id}: recovered ${bytes} bytes but the evidence ${evidence} does not exist`);
    if (st.size !== bytes) fail(`session ${id}: evidence ${evidence} holds ${st.size} bytes, recovered says ${bytes}`);
  }
  const active = await readAll(view, id);
  checkRun(id, 'active journal', active);
  const last = active[active.length - 1];
  if ((last?.seq ?? 0) !== opened.lastSeq) fail(`session ${id}: open says lastSeq ${opened.lastSeq}, the journal ends at ${last?.seq ?? 0}`);
  const generations = await view.history(id);
  const bySeq = new Map<number, Stored>();
  const checkpoints = new Map<number, number>(); // generation -> seq
  const take = (recs: Stored[], label: string) => {
    for (const r of recs) {
      if (r.kind === 'checkpoint') {
        checkpoints.set(Number(r.generation), r.seq);
        continue;
      }
      const seen = bySeq.get(r.seq);
      if (seen && !sameValue(seen, r)) fail(`session ${id}: seq ${r.seq} differs between generations (${label})`);
      bySeq.set(r.seq, r);
    }
  };
  for (const g of generations) {
    const recs = await readAll(view, id, g.generation);
    checkRun(id, `generation ${g.generation}`, recs);
    take(recs, `generation ${g.generation}`);
  }
  take(active, 'active');
  for (let seq = 1; seq <= opened.lastSeq; seq++) {
    if (!bySeq.has(seq)) fail(`session ${id}: seq ${seq} of 1..${opened.lastSeq} is in no generation`);
  }
  if (!ledger) return { stats, opened, active };
  if (opened.lastSeq < ledger.maxSeq) fail(`session ${id}: lastSeq ${opened.lastSeq} < acknowledged ${ledger.maxSeq}: acknowledged records lost`);
  for (const [seq, sent] of ledger.records) {
    const got = bySeq.get(seq);
    if (!got) fail(`session ${id}: acknowledged seq ${seq} is missing`);
    if (!sameValue(strip(got), sent)) fail(`session ${id}: seq ${seq} differs from what was acknowledged\n sent ${JSON.stringify(sent).slice(0, 300)}\n got  ${JSON.stringify(got).slice(0, 300)}`);
    stats.records += 1;
  }
  for (const t of ledger.turns) {
    const got = bySeq.get(t.seq);
    if (got?.kind !== 'turn' || got.turnId !== t.turnId || got.event !== t.event
      || (t.phase !== undefined && got.phase !== t.phase) || (t.outcome !== undefined && got.outcome !== t.outcome)) {
      fail(`session ${id}: acknowledged turn ${t.event} of ${t.turnId} is not seq ${t.seq} (found ${JSON.stringify(got)?.slice(0, 200)})`);
    }
    stats.turns += 1;
  }
  for (const c of ledger.compactions) {
    if (checkpoints.get(c.generation) !== c.checkpointSeq) {
      fail(`session ${id}: acknowledged compaction to generation ${c.generation} (checkpoint seq ${c.checkpointSeq}) not found; checkpoints ${JSON.stringify([...checkpoints])}`);
    }
    stats.compactions += 1;
  }
  for (const m of ledger.maybe) {
    const present = m.records.map((_, i) => bySeq.get(m.firstSeq + i));
    const n = present.filter(Boolean).length;
    if (n === 0) continue;
    // the seqs may have been reused by later acknowledged appends after the batch was lost
    if (m.records.some((_, i) => ledger.records.has(m.firstSeq + i))) continue;
    if (n !== m.records.length) fail(`session ${id}: an uncertain batch at ${m.firstSeq} is partly present (${n} of ${m.records.length})`);
    m.records.forEach((sent, i) => {
      if (!sameValue(strip(present[i] as Stored), sent)) fail(`session ${id}: uncertain seq ${m.firstSeq + i} differs from what was sent`);
    });
  }
  return { stats, opened, active };
}

/** First seq of the active journal (a checkpoint's after a compaction). */
export function activeFirstSeq(active: Stored[]): number {
  const first = active[0];
  return first?.kind === 'checkpoint' ? first.seq : 1;
}

/** Sessions with a journal on disk (a create that crashed before its rename leaves only a .tmp). */
export function sessionsOnDisk(store: string): string[] {
  const dir = path.join(store, 'sessions');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((id) => fs.existsSync(path.join(dir, id, 'journal.jsonl')));
}

/**
 * Where simulated-crash scenarios put their directories: a tmpfs when there is one (their
 * durability is modelled by the layer, not the disk, so real syncs would only cost time).
 */
export function fastTmp(): string {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir();
  }
}
