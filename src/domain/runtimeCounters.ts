import { StoreError } from './errors.js';

/**
 * The runtime counters of a session (protocol/runtimeRecords.ts): the last apiSeq, the
 * requests still open, the highest toolSeq started. Like the turn state they are part of a
 * journal position: reduced from committed records, carried by checkpoints, vouched for by
 * the index. Invariant: a counter never goes down, so an apiSeq or toolSeq is never reused.
 */
export interface RuntimeCounters {
  apiSeq: number;
  openApi: number[];
  toolSeq: number;
}

export const NO_RUNTIME: RuntimeCounters = Object.freeze({ apiSeq: 0, openApi: Object.freeze([]) as unknown as number[], toolSeq: 0 });

/** The largest toolSeq (a client may skip ahead, but not to where counters stop being exact). */
export const MAX_TOOL_SEQ = 2 ** 31 - 1;

/** Open requests remembered at most (the oldest are forgotten: their responses can no longer pair). */
export const MAX_OPEN_API = 1024;

type Rec = Record<string, unknown> & { kind: string };

/** The counters after a committed record; lenient, because it was checked when it was appended. */
export function reduceRuntime(c: RuntimeCounters, rec: Rec): RuntimeCounters {
  if (rec.kind === 'checkpoint') return asCounters(rec.runtime);
  // A rewind restores which requests are open as of its toSeq, never the high-water marks.
  if (rec.kind === 'rewind') return { ...c, openApi: asCounters({ openApi: rec.openApi }).openApi };
  if (rec.kind === 'api' && typeof rec.apiSeq === 'number') {
    if (rec.direction === 'request') return { ...c, apiSeq: Math.max(c.apiSeq, rec.apiSeq), openApi: [...c.openApi, rec.apiSeq].slice(-MAX_OPEN_API) };
    return { ...c, openApi: c.openApi.filter((s) => s !== rec.apiSeq) };
  }
  if (rec.kind === 'toolStart' && typeof rec.toolSeq === 'number') return { ...c, toolSeq: Math.max(c.toolSeq, rec.toolSeq) };
  return c;
}

export function asCounters(v: unknown): RuntimeCounters {
  const o = v as Partial<RuntimeCounters> | null | undefined;
  if (!o || typeof o !== 'object') return NO_RUNTIME;
  const n = (x: unknown) => (Number.isSafeInteger(x) && (x as number) >= 0 ? (x as number) : 0);
  return { apiSeq: n(o.apiSeq), toolSeq: n(o.toolSeq), openApi: Array.isArray(o.openApi) ? o.openApi.filter((x) => Number.isSafeInteger(x)) : [] };
}

/** toolSeqs handed out in this process: by tool/allocateScratch (reserved until started) or by a toolStart. */
export interface ToolSeqIssuer {
  /** The highest toolSeq handed out (or found as a scratch directory). */
  issued: number;
  /** Allocated by tool/allocateScratch, not yet started. */
  reserved: Set<number>;
}

const invalid = (i: number, member: string, message: string) =>
  new StoreError('InvalidArgument', `record ${i}: ${message}`, { path: `records[${i}].${member}` });

/**
 * Assigns apiSeq and toolSeq to the runtime records of one append, at commit time, against the
 * counters the appends before it left. Returns the texts to write (counters placed right after
 * `kind`) and the counters after them; throws InvalidArgument and then changes nothing.
 * `take()`, called once the whole plan holds, takes the toolSeqs used from `issuer` at once —
 * before the write is durable — so a scratch allocation racing the commit can never hand one
 * out again (a commit that then fails only leaves a gap: toolSeqs are unique, not gapless);
 * `giveBack()` returns allocated ones when the commit provably wrote nothing.
 */
export function assignRuntime(
  values: readonly Rec[], texts: readonly string[], counters: RuntimeCounters, issuer: ToolSeqIssuer,
): { texts: string[]; counters: RuntimeCounters; take(): void; giveBack(): void } {
  let c = counters;
  let issued = Math.max(issuer.issued, c.toolSeq);
  const started: number[] = [];
  const out = values.map((rec, i) => {
    const text = texts[i] as string;
    if (rec.kind === 'api') {
      if (Object.hasOwn(rec, 'apiSeq')) throw invalid(i, 'apiSeq', 'apiSeq is assigned by the server');
      let apiSeq: number;
      if (rec.direction === 'request') apiSeq = c.apiSeq + 1;
      else {
        const open = c.openApi[c.openApi.length - 1];
        if (open === undefined) throw invalid(i, 'direction', 'an api response with no open request');
        apiSeq = open;
      }
      c = reduceRuntime(c, { ...rec, apiSeq });
      return withCounter(text, 'apiSeq', apiSeq);
    }
    if (rec.kind === 'toolStart') {
      const asked = rec.toolSeq as number | undefined;
      let toolSeq: number;
      if (asked === undefined) toolSeq = issued + 1;
      else if ((issuer.reserved.has(asked) && !started.includes(asked)) || asked > issued) toolSeq = asked;
      else throw invalid(i, 'toolSeq', `toolSeq ${asked} was not allocated by tool/allocateScratch or is already used`);
      if (toolSeq > MAX_TOOL_SEQ) throw invalid(i, 'toolSeq', `toolSeq may not exceed ${MAX_TOOL_SEQ}`);
      issued = Math.max(issued, toolSeq);
      started.push(toolSeq);
      c = reduceRuntime(c, { ...rec, toolSeq });
      const { kind: _k, toolSeq: _t, ...rest } = rec;
      return JSON.stringify({ kind: 'toolStart', toolSeq, ...rest });
    }
    if (rec.kind === 'toolFinish' || rec.kind === 'toolStream') {
      const t = rec.toolSeq as number;
      if (t > c.toolSeq || (issuer.reserved.has(t) && !started.includes(t))) throw invalid(i, 'toolSeq', `toolSeq ${t} has not started (no toolStart)`);
    }
    return text;
  });
  const reservedBefore = started.filter((t) => issuer.reserved.has(t));
  const take = () => {
    issuer.issued = Math.max(issuer.issued, issued);
    for (const t of started) issuer.reserved.delete(t);
  };
  // A commit that wrote nothing (NotWritten, RolledBack) gives allocated toolSeqs back for a retry.
  const giveBack = () => {
    for (const t of reservedBefore) issuer.reserved.add(t);
  };
  return { texts: out, counters: c, take, giveBack };
}

/** `{"kind":"x",...}` with `"name":value` placed right after kind (the text starts with kind). */
function withCounter(text: string, name: string, value: number): string {
  const at = text.indexOf(',') === -1 ? text.length - 1 : text.indexOf(',');
  return `${text.slice(0, at)},"${name}":${value}${text.slice(at)}`;
}
