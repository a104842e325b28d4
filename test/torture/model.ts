import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { blobPositionsOf } from '../../protocol/blobPositions.js';
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

/** A state value: any JSON but null (state/get answers null for a key without value). */
export function stateValue(rng: Rng): unknown {
  if (rng.chance(0.1)) return text(rng, 500, 3000);
  const v = jsonValue(rng);
  return v === null ? { n: null } : v;
}

/**
 * A string for a blob: mostly a few KB, sometimes up to ~300 KB; about a third of the time one
 * sent before (the same payload again: one blob file per store).
 */
export function largeString(rng: Rng, pool: string[]): string {
  if (pool.length > 0 && rng.chance(0.35)) return rng.pick(pool);
  const size = rng.chance(0.93) ? rng.range(4_100, 20_000) : rng.range(20_000, 300_000);
  const unit = text(rng, 20, 120) || 'x';
  const s = `${unit.repeat(Math.ceil(size / unit.length))}${text(rng, 1, 20)}${rng.int(1e9)}`; // whole units: no lone surrogate
  if (pool.length < 12) pool.push(s);
  else pool[rng.int(pool.length)] = s;
  return s;
}

/**
 * A record with a large string: at a BlobRef position (a tool call's arguments: a blob past any
 * threshold), or where the schema has none (an event payload, message content: inline whatever
 * its size, protocol §15.4).
 */
export function blobRecord(rng: Rng, pool: string[]): Rec {
  const r = rng.next();
  if (r < 0.5) {
    const calls = [{ id: `call_${rng.int(1e6)}`, name: 'write_file', arguments: largeString(rng, pool) }];
    if (rng.chance(0.3)) calls.push({ id: `call_${rng.int(1e6)}`, name: 'read_file', arguments: rng.chance(0.5) ? largeString(rng, pool) : '{}' });
    return { kind: 'message', message: { role: 'assistant', toolCalls: calls } };
  }
  if (r < 0.75) return { kind: 'message', message: { role: rng.pick(['user', 'assistant']), content: largeString(rng, pool) } };
  return { kind: 'event', type: 't.output', payload: { out: largeString(rng, pool), k: rng.int(10) } };
}

/** What a record reads back as with `inline: true`: as sent (no record a client sends holds an $attach). */
export function inlined(v: unknown): unknown {
  return v;
}

/** Whether a record sent as `rec` holds a blob: a string past `threshold` UTF-8 bytes at one of its kind's BLOB_POSITIONS. */
export function holdsBlob(rec: unknown, threshold: number): boolean {
  const at = (v: unknown, steps: string[]): boolean => {
    if (steps.length === 0) return typeof v === 'string' && Buffer.byteLength(v) > threshold;
    const [step, ...rest] = steps as [string, ...string[]];
    if (step === '[]') return Array.isArray(v) && v.some((w) => at(w, rest));
    return v !== null && typeof v === 'object' && !Array.isArray(v) && at((v as Record<string, unknown>)[step], rest);
  };
  const kind = (rec as { kind?: unknown } | null)?.kind;
  return blobPositionsOf(kind).some((p) => at(rec, p.replace(/\[\]/g, '.[]').split('.')));
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

/**
 * A stored record as comparable with the (inlined) record sent: without what the store adds —
 * seq, ts, turnId, an api record's apiSeq, and the toolSeq of a toolStart sent without one.
 */
export function comparable(r: Stored, sent: Rec): Rec {
  const out = strip(r) as Record<string, unknown>;
  if (out.kind === 'api') delete out.apiSeq;
  if (out.kind === 'toolStart' && !('toolSeq' in sent)) delete out.toolSeq;
  return out as Rec;
}

// ---------------------------------------------------------------------------------------------
// The client-side model of a session: predicts seqs of pipelined operations

export type TurnView = { status: 'starting' } | { status: 'active' | 'retryable'; turnId: string };

export type Op =
  | { type: 'append'; sessionId: string; records: Rec[]; firstSeq: number; chosenToolSeq?: boolean }
  | { type: 'turn'; sessionId: string; seq: number; method: 'turn/start'; params: { sessionId: string; kind: 'user' | 'background' } }
  | {
    type: 'turn'; sessionId: string; seq: number; method: 'turn/setPhase' | 'turn/fail' | 'turn/resume' | 'turn/finish';
    params: { sessionId: string; turnId: string; phase?: string; error?: string; outcome?: string };
  }
  | { type: 'compact'; sessionId: string; throughSeq: number; summary: string }
  /** tool/allocateScratch; `above`: the largest toolSeq this client sent before it (the answer must exceed it). */
  | { type: 'allocate'; sessionId: string; requestId: string; above: number }
  /** state/set (value) or state/delete (value undefined); `id` names it in the ledger's state log. */
  | { type: 'state'; sessionId: string; key: string; value?: unknown; id: number }
  /** session/update: one sessionUpdate record at `seq`, the members as sent (none is changed by sanitizing). */
  | { type: 'update'; sessionId: string; seq: number; params: { title?: string; tags?: string[]; metadata?: Record<string, unknown> } };

/**
 * Per session, requests take effect in arrival order (protocol README 3.6), so a client that
 * knows every operation it sent knows the seq each will get. The model is reset from the
 * store after every crash.
 */
export interface PlanOptions {
  big?: boolean;
  compactP?: number;
  turnP?: number;
  /** Share of operations that are state/set or state/delete (default 0). */
  stateP?: number;
  /** Share of operations that are tool/allocateScratch (default 0). */
  allocateP?: number;
  /** Share of operations that are session/update (default 0). */
  updateP?: number;
  /** Share of appended records that are runtime records (api, toolStart/Stream/Finish; default 0). */
  runtimeP?: number;
  /** Share of appended records that carry a large string (default 0). */
  blobP?: number;
  /** Large payloads already sent: reused to exercise blob dedupe (shared by the sessions of a store). */
  pool?: string[];
}

/** State keys the workloads write (valid file names). */
export const STATE_KEYS = ['cwd', 'bash.state', 'plan-v2', 'k_3'];

/**
 * session/update members that the store keeps exactly as sent: a title of letters and inner
 * single spaces (sanitizing changes nothing; '' removes the title), tags of the tag alphabet,
 * a merge patch of generated JSON (null members delete).
 */
export function updateParams(rng: Rng): { title?: string; tags?: string[]; metadata?: Record<string, unknown> } {
  const word = () => Array.from({ length: rng.range(1, 8) }, () => rng.pick([...'acdefghijlmnopqrstuvwxyz'])).join('');
  const out: { title?: string; tags?: string[]; metadata?: Record<string, unknown> } = {};
  const r = rng.next();
  if (r < 0.6) out.title = rng.chance(0.1) ? '' : Array.from({ length: rng.range(1, 4) }, word).join(' ');
  if (r > 0.4 || rng.chance(0.3)) out.tags = [...new Set(Array.from({ length: rng.int(4) }, () => `${word()}${rng.pick(['', '.1', ':x'])}`))];
  if (out.title === undefined && out.tags === undefined || rng.chance(0.3)) {
    const patch: Record<string, unknown> = {};
    for (let i = rng.range(1, 3); i > 0; i--) patch[rng.pick(KEYS)] = rng.chance(0.2) ? null : jsonValue(rng);
    out.metadata = patch;
  }
  return out;
}

/** The sessionUpdate record an update is stored as (members as sent, in the store's order). */
export function updateRecord(params: { title?: string; tags?: string[]; metadata?: Record<string, unknown> }): Rec {
  return { kind: 'sessionUpdate', ...params };
}

let stateOpCounter = 0;
let requestCounter = 0;

export class SessionModel {
  /** Requests (api direction request) sent and not yet answered by a response record. */
  openApi = 0;
  /** At least every toolSeq handed out or used so far (client-chosen toolSeqs go above it). */
  toolHigh = 0;
  /** Largest toolSeq this client put in a toolStart or was handed by an allocation. */
  toolSent = 0;
  /** toolSeqs handed out by tool/allocateScratch, not started yet. */
  allocated: Array<{ toolSeq: number; requestId: string }> = [];
  /** Tools whose toolStart was sent by this process, not finished. */
  openTools: Array<{ toolSeq: number; requestId: string }> = [];

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
  plan(rng: Rng, opts: PlanOptions = {}): Op {
    if (opts.stateP && rng.chance(opts.stateP)) {
      const key = rng.pick(STATE_KEYS);
      const del = rng.chance(0.25);
      return del
        ? { type: 'state', sessionId: this.id, key, id: ++stateOpCounter }
        : { type: 'state', sessionId: this.id, key, value: stateValue(rng), id: ++stateOpCounter };
    }
    if (opts.updateP && rng.chance(opts.updateP)) return { type: 'update', sessionId: this.id, seq: ++this.lastSeq, params: updateParams(rng) };
    if (opts.allocateP && rng.chance(opts.allocateP)) {
      this.toolHigh += 1; // the answer is at most this
      return { type: 'allocate', sessionId: this.id, requestId: `alloc-${++requestCounter}`, above: this.toolSent };
    }
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
    const before = this.toolSent;
    const records = batch(rng).map((r) => this.decorate(rng, r, opts));
    const op: Op = { type: 'append', sessionId: this.id, records, firstSeq: this.lastSeq + 1, ...(this.toolSent > before ? { chosenToolSeq: true } : {}) };
    this.lastSeq += records.length;
    return op;
  }

  /** An operation was answered (nothing to release: requests take effect in arrival order). */
  settled(_op: Op): void {}

  /** Replaces a generated record by a runtime record or a blob-carrying one, at the given rates. */
  private decorate(rng: Rng, r: Rec, opts: PlanOptions): Rec {
    if (opts.runtimeP && rng.chance(opts.runtimeP)) return this.runtimeRecord(rng, opts);
    if (opts.blobP && rng.chance(opts.blobP)) return blobRecord(rng, opts.pool ?? []);
    return r;
  }

  private runtimeRecord(rng: Rng, opts: PlanOptions): Rec {
    const payload = () => (opts.blobP && rng.chance(0.3) ? { body: largeString(rng, opts.pool ?? []), n: rng.int(100) } : jsonValue(rng));
    const r = rng.next();
    if (r < 0.35) {
      if (this.openApi > 0 && rng.chance(0.55)) {
        this.openApi -= 1;
        return { kind: 'api', direction: 'response', payload: payload() };
      }
      this.openApi += 1;
      return { kind: 'api', direction: 'request', payload: payload() };
    }
    if (r < 0.55 || this.openTools.length === 0) {
      const toolUse = rng.chance(0.5) ? { toolUseId: `call_${rng.int(1e6)}` } : {};
      const agent = rng.chance(0.2) ? { agent: rng.pick(['main', 'sub-1']) } : {};
      const tool = rng.pick(['bash', 'read', 'edit', 'grep']);
      const alloc = this.allocated.length > 0 && rng.chance(0.7) ? this.allocated.shift() : undefined;
      if (alloc) {
        this.openTools.push(alloc);
        return { kind: 'toolStart', toolSeq: alloc.toolSeq, requestId: alloc.requestId, tool, ...toolUse, ...agent };
      }
      const requestId = `req-${++requestCounter}`;
      if (rng.chance(0.15)) {
        // the server assigns its toolSeq; it is never named again (a run left unfinished)
        this.toolHigh += 1;
        return { kind: 'toolStart', requestId, tool, ...toolUse, ...agent };
      }
      const toolSeq = this.toolHigh + rng.range(1, 3); // larger than every toolSeq so far
      this.toolHigh = toolSeq;
      this.toolSent = Math.max(this.toolSent, toolSeq);
      this.openTools.push({ toolSeq, requestId });
      return { kind: 'toolStart', toolSeq, requestId, tool, ...toolUse, ...agent };
    }
    const t = rng.pick(this.openTools);
    if (r < 0.85) {
      const stream = rng.pick(['stdout', 'stderr']);
      if (rng.chance(0.35)) {
        const bytes = Buffer.from(Array.from({ length: rng.range(0, 300) }, () => rng.int(256)));
        return { kind: 'toolStream', toolSeq: t.toolSeq, stream, dataBase64: bytes.toString('base64') };
      }
      const big = opts.blobP && rng.chance(0.2);
      return { kind: 'toolStream', toolSeq: t.toolSeq, stream, text: big ? largeString(rng, opts.pool ?? []) : text(rng, 0, 200) };
    }
    this.openTools.splice(this.openTools.indexOf(t), 1);
    const success = rng.chance(0.7);
    return {
      kind: 'toolFinish', toolSeq: t.toolSeq, requestId: t.requestId, success,
      ...(rng.chance(0.5) ? { exitCode: success ? 0 : rng.range(1, 255) } : {}),
      ...(rng.chance(0.3) ? { outputLen: rng.int(100_000) } : {}),
      ...(!success && rng.chance(0.5) ? { error: text(rng, 1, 40) || 'failed' } : {}),
    };
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
  readonly maybe: Array<{ firstSeq: number; records: Rec[]; op: Op }> = [];
  /**
   * Seqs of appends and updates sent (acknowledged or not yet): a later writer may reuse an uncertain
   * batch's seqs once that batch is lost, and its batch may be on disk before its answer.
   */
  readonly sentSeqs = new Map<number, Op[]>();
  maxSeq = 0;
  /** apiSeq of each acknowledged api record, as first read back (it must never change). */
  readonly apiSeqs = new Map<number, number>();
  /** toolSeqs handed out by acknowledged allocations, with their requestId. */
  readonly allocated = new Map<number, string>();
  /** Seqs of acknowledged records that hold a blob. */
  readonly blobSeqs = new Set<number>();
  /**
   * Per state key, its operations in the order sent: the value (null: deleted) and whether it
   * was acknowledged. The first entry may be the value a check read (acknowledged by then).
   */
  readonly state = new Map<string, Array<{ id: number; value: unknown; acked: boolean }>>();
  /**
   * The titles session/update set, in the order sent (undefined: removed), with whether each
   * was acknowledged; the first entry may be the title a check read. Empty: never changed.
   */
  readonly titles: Array<{ seq: number; title: string | undefined; acked: boolean }> = [];

  /** Titles the header may show now: the last acknowledged one (or, if none, any), or one sent after it. */
  allowedTitles(): Array<string | undefined> | undefined {
    if (this.titles.length === 0) return undefined;
    let last = -1;
    this.titles.forEach((e, i) => { if (e.acked) last = i; });
    if (last === -1) return undefined; // none acknowledged: the title given at create, or any sent since
    return this.titles.slice(last).map((e) => e.title);
  }

  /** Values a state key may hold now: the last acknowledged one, or one sent after it. */
  allowedState(key: string): unknown[] {
    const log = this.state.get(key) ?? [];
    let last = -1;
    log.forEach((e, i) => { if (e.acked) last = i; });
    return [last >= 0 ? (log[last] as { value: unknown }).value : null, ...log.slice(last + 1).map((e) => e.value)];
  }
}

export class Ledger {
  readonly sessions = new Map<string, SessionLedger>();
  acked = 0;

  session(id: string): SessionLedger {
    let s = this.sessions.get(id);
    if (!s) this.sessions.set(id, (s = new SessionLedger()));
    return s;
  }

  /** A state operation was sent (its outcome unknown until acknowledged). */
  stateSent(op: Op): void {
    if (op.type !== 'state') return;
    const s = this.session(op.sessionId);
    let log = s.state.get(op.key);
    if (!log) s.state.set(op.key, (log = []));
    log.push({ id: op.id, value: op.value === undefined ? null : op.value, acked: false });
  }

  /** An append or session/update was sent: its seqs may be on disk from now on, acknowledged or not. */
  seqsSent(op: Op): void {
    if (op.type !== 'append' && op.type !== 'update') return;
    const s = this.session(op.sessionId);
    const [first, n] = op.type === 'append' ? [op.firstSeq, op.records.length] : [op.seq, 1];
    for (let i = 0; i < n; i++) s.sentSeqs.set(first + i, [...(s.sentSeqs.get(first + i) ?? []), op]);
  }

  /** A session/update was sent (its outcome unknown until acknowledged). */
  updateSent(op: Op): void {
    if (op.type !== 'update' || op.params.title === undefined) return;
    this.session(op.sessionId).titles.push({ seq: op.seq, title: op.params.title === '' ? undefined : op.params.title, acked: false });
  }

  /** A check read the session's title: from now on that is the acknowledged one. */
  titleRead(sessionId: string, title: string | undefined): void {
    const s = this.session(sessionId);
    if (s.titles.length > 0) s.titles.splice(0, s.titles.length, { seq: 0, title, acked: true });
  }

  /** A check read `value` for a state key: from now on that is the acknowledged value. */
  stateRead(sessionId: string, key: string, value: unknown): void {
    this.session(sessionId).state.set(key, [{ id: 0, value, acked: true }]);
  }

  /** An answered operation: checks the answer against the model's prediction and records it. */
  ack(op: Op, result: unknown, blobThreshold?: number): void {
    const s = this.session(op.sessionId);
    this.acked += 1;
    if (op.type === 'state') {
      const e = s.state.get(op.key)?.find((x) => x.id === op.id);
      if (!e) fail(`session ${op.sessionId}: state ${op.key} acknowledged but never sent`);
      e.acked = true;
      return;
    }
    if (op.type === 'allocate') {
      const { toolSeq } = result as { toolSeq: number };
      if (!Number.isSafeInteger(toolSeq) || toolSeq <= op.above) fail(`session ${op.sessionId}: tool/allocateScratch answered toolSeq ${toolSeq}, not above ${op.above}, a toolSeq already sent`);
      const other = s.allocated.get(toolSeq);
      if (other !== undefined) fail(`session ${op.sessionId}: tool/allocateScratch handed out toolSeq ${toolSeq} twice (${other}, ${op.requestId})`);
      s.allocated.set(toolSeq, op.requestId);
      return;
    }
    if (op.type === 'update') {
      const r = result as { seq?: number; title?: string };
      if (r.seq !== op.seq) fail(`session ${op.sessionId}: session/update answered seq ${r.seq}, expected ${op.seq} (arrival order)`);
      s.records.set(op.seq, updateRecord(op.params));
      s.maxSeq = Math.max(s.maxSeq, op.seq);
      const e = s.titles.find((x) => x.seq === op.seq);
      if (e) e.acked = true;
      return;
    }
    if (op.type === 'append') {
      const r = result as { firstSeq: number; lastSeq: number };
      const want = op.firstSeq + op.records.length - 1;
      if (r.firstSeq !== op.firstSeq || r.lastSeq !== want) {
        fail(`session ${op.sessionId}: append answered ${r.firstSeq}..${r.lastSeq}, expected ${op.firstSeq}..${want} (arrival order)`);
      }
      op.records.forEach((rec, i) => {
        s.records.set(op.firstSeq + i, inlined(rec) as Rec);
        if (blobThreshold !== undefined && holdsBlob(rec, blobThreshold)) s.blobSeqs.add(op.firstSeq + i);
      });
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
    if (op.type === 'append') this.session(op.sessionId).maybe.push({ firstSeq: op.firstSeq, records: op.records.map((r) => inlined(r) as Rec), op });
    if (op.type === 'update') this.session(op.sessionId).maybe.push({ firstSeq: op.seq, records: [updateRecord(op.params)], op });
  }
}

// ---------------------------------------------------------------------------------------------
// Checking a store against the ledger

export interface OpenedView {
  lastSeq: number;
  recovered?: { bytes: number; evidence: string };
  turn?: { turnId: string; status: string } | null;
  /** The effective title (after session/update). */
  title?: string;
}

/** The few calls a check needs, over the binary (JSON-RPC) or the store library. */
export interface StoreView {
  root: string;
  open(sessionId: string): Promise<OpenedView>;
  read(sessionId: string, afterSeq: number, generation?: number): Promise<{ records: Stored[]; nextAfterSeq: number | null }>;
  history(sessionId: string): Promise<Array<{ generation: number; throughSeq: number }>>;
  /** state/get; when given, the ledger's state keys are checked. */
  getState?(sessionId: string, key: string): Promise<unknown>;
}

export interface CheckStats {
  records: number;
  turns: number;
  compactions: number;
  recovered: number;
  /** Acknowledged records holding a blob, read back inline and identical. */
  blobRecords: number;
  /** Acknowledged runtime records (api, toolStart, toolStream, toolFinish) read back identical. */
  runtimeRecords: number;
  /** api responses paired with their request's apiSeq, over the whole history. */
  apiPairs: number;
  /** State keys checked against the acknowledged (or an in-flight) value. */
  stateKeys: number;
  /** Acknowledged session/update records read back identical. */
  updates: number;
}

export function newCheckStats(): CheckStats {
  return { records: 0, turns: 0, compactions: 0, recovered: 0, blobRecords: 0, runtimeRecords: 0, apiPairs: 0, stateKeys: 0, updates: 0 };
}

export function addStats(into: CheckStats, s: CheckStats): void {
  into.records += s.records;
  into.turns += s.turns;
  into.compactions += s.compactions;
  into.recovered += s.recovered;
  into.blobRecords += s.blobRecords;
  into.runtimeRecords += s.runtimeRecords;
  into.apiPairs += s.apiPairs;
  into.stateKeys += s.stateKeys;
  into.updates += s.updates;
}

const RUNTIME_KINDS = new Set(['api', 'toolStart', 'toolStream', 'toolFinish']);

/** What a session's runtime records add up to: the api requests still open, the largest toolSeq. */
export interface RuntimeView { openApi: number; maxToolSeq: number }

/**
 * The runtime counters over the whole history in seq order: a request's apiSeq is larger than
 * every earlier request's (never reused); a response carries the apiSeq of the latest request
 * still open; every toolStart has its own toolSeq (one an allocation handed out only with that
 * allocation's requestId); toolStream and toolFinish name a started tool.
 */
function checkRuntime(id: string, bySeq: Map<number, Stored>, lastSeq: number, ledger: SessionLedger | undefined, stats: CheckStats): RuntimeView {
  const open: number[] = [];
  let lastRequest = 0;
  const started = new Set<number>();
  let maxToolSeq = 0;
  for (let seq = 1; seq <= lastSeq; seq++) {
    const r = bySeq.get(seq) as Stored;
    if (!RUNTIME_KINDS.has(r.kind)) continue;
    const where = `session ${id} seq ${seq}`;
    if (r.kind === 'api') {
      const apiSeq = r.apiSeq as number;
      if (!Number.isSafeInteger(apiSeq) || apiSeq < 1) fail(`${where}: api record without a valid apiSeq (${JSON.stringify(r.apiSeq)})`);
      if (r.direction === 'request') {
        if (apiSeq <= lastRequest) fail(`${where}: request apiSeq ${apiSeq} after a request with apiSeq ${lastRequest} (reused or out of order)`);
        lastRequest = apiSeq;
        open.push(apiSeq);
      } else {
        const want = open.pop();
        if (want === undefined) fail(`${where}: a response with no open request`);
        if (apiSeq !== want) fail(`${where}: response carries apiSeq ${apiSeq}, the latest open request is ${want}`);
        stats.apiPairs += 1;
      }
      const first = ledger?.apiSeqs.get(seq);
      if (ledger?.records.has(seq)) {
        if (first === undefined) ledger.apiSeqs.set(seq, apiSeq);
        else if (first !== apiSeq) fail(`${where}: acknowledged api record read back with apiSeq ${apiSeq}, earlier ${first}`);
      }
      continue;
    }
    const toolSeq = r.toolSeq as number;
    if (!Number.isSafeInteger(toolSeq) || toolSeq < 1) fail(`${where}: ${r.kind} without a valid toolSeq`);
    if (r.kind === 'toolStart') {
      if (started.has(toolSeq)) fail(`${where}: toolSeq ${toolSeq} started twice`);
      started.add(toolSeq);
      maxToolSeq = Math.max(maxToolSeq, toolSeq);
      const allocatedTo = ledger?.allocated.get(toolSeq);
      if (allocatedTo !== undefined && allocatedTo !== r.requestId) fail(`${where}: toolStart ${String(r.requestId)} has toolSeq ${toolSeq}, which tool/allocateScratch handed to ${allocatedTo}`);
    } else if (!started.has(toolSeq)) {
      fail(`${where}: ${r.kind} names toolSeq ${toolSeq}, which was not started before`);
    }
  }
  return { openApi: open.length, maxToolSeq };
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
export interface SessionCheck {
  stats: CheckStats;
  opened: OpenedView;
  active: Stored[];
  runtime: RuntimeView;
  /** The value of each state key of the ledger, as read. */
  state: Map<string, unknown>;
}

export async function checkSession(view: StoreView, id: string, ledger: SessionLedger | undefined): Promise<SessionCheck> {
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
  const runtime = checkRuntime(id, bySeq, opened.lastSeq, ledger, stats);
  const state = new Map<string, unknown>();
  if (!ledger) return { stats, opened, active, runtime, state };
  if (opened.lastSeq < ledger.maxSeq) fail(`session ${id}: lastSeq ${opened.lastSeq} < acknowledged ${ledger.maxSeq}: acknowledged records lost`);
  for (const [seq, sent] of ledger.records) {
    const got = bySeq.get(seq);
    if (!got) fail(`session ${id}: acknowledged seq ${seq} is missing`);
    if (!sameValue(comparable(got, sent), sent)) fail(`session ${id}: seq ${seq} differs from what was acknowledged\n sent ${JSON.stringify(sent).slice(0, 300)}\n got  ${JSON.stringify(got).slice(0, 300)}`);
    stats.records += 1;
    if (ledger.blobSeqs.has(seq)) stats.blobRecords += 1;
    if (RUNTIME_KINDS.has(sent.kind)) stats.runtimeRecords += 1;
    if (sent.kind === 'sessionUpdate') stats.updates += 1;
  }
  const titles = ledger.allowedTitles();
  if (titles && !titles.includes(opened.title)) {
    fail(`session ${id}: the header's title is ${JSON.stringify(opened.title)}; acknowledged ${JSON.stringify(titles[0])}${titles.length > 1 ? `, or one of ${titles.length - 1} sent later` : ''}`);
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
    // the seqs may have been reused after the batch was lost, by appends acknowledged or in flight
    if (m.records.some((_, i) => ledger.records.has(m.firstSeq + i) || (ledger.sentSeqs.get(m.firstSeq + i) ?? []).some((o) => o !== m.op))) continue;
    if (n !== m.records.length) fail(`session ${id}: an uncertain batch at ${m.firstSeq} is partly present (${n} of ${m.records.length})`);
    m.records.forEach((sent, i) => {
      if (!sameValue(comparable(present[i] as Stored, sent), sent)) fail(`session ${id}: uncertain seq ${m.firstSeq + i} differs from what was sent`);
    });
  }
  if (view.getState) {
    for (const key of ledger.state.keys()) {
      const got = await view.getState(id, key);
      const allowed = ledger.allowedState(key);
      if (!allowed.some((v) => sameValue(v, got))) {
        fail(`session ${id}: state ${key} holds ${JSON.stringify(got)?.slice(0, 200)}; acknowledged ${JSON.stringify(allowed[0])?.slice(0, 200)}${allowed.length > 1 ? `, or one of ${allowed.length - 1} sent later` : ''}`);
      }
      state.set(key, got);
      stats.stateKeys += 1;
    }
  }
  return { stats, opened, active, runtime, state };
}

/** First seq of the active journal (a checkpoint's after a compaction). */
export function activeFirstSeq(active: Stored[]): number {
  const first = active[0];
  return first?.kind === 'checkpoint' ? first.seq : 1;
}

/** Files under blobs/sha256/ of a store. */
export function countBlobFiles(store: string): number {
  const root = path.join(store, 'blobs', 'sha256');
  if (!fs.existsSync(root)) return 0;
  return fs.readdirSync(root).reduce((n, fan) => n + fs.readdirSync(path.join(root, fan)).length, 0);
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
