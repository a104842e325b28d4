import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Answer, type Framing, type Peer, type PeerFactory, PipePeer } from './wire.js';
import { WireSchema } from './wireSchema.js';

export type Status = 'pass' | 'fail' | 'skip';

/** One check's outcome: its id is `scenario:check`. */
export interface CheckResult {
  scenario: string;
  check: string;
  framing: Framing;
  status: Status;
  message?: string;
}

export interface Scenario {
  name: string;
  summary: string;
  run(t: ScenarioContext): Promise<void>;
}

export interface RunOptions {
  command: string[];
  timeoutMs: number;
  report: (r: CheckResult) => void;
  /** Who speaks to the server: the suite's own PipePeer unless given (a client library under test). */
  peer?: PeerFactory;
}

/** A failed expectation inside a check. */
export class CheckFailure extends Error {}

/**
 * What a scenario runs with: fresh stores and servers, and `check`, which records one named
 * outcome. Every server started here is killed and every store removed when the scenario ends;
 * every message of every server is checked against the wire schema, as the scenario's last check.
 */
export class ScenarioContext {
  private readonly peers: Peer[] = [];
  private readonly stores: string[] = [];
  readonly schema = new WireSchema();

  constructor(
    readonly scenario: Scenario,
    readonly framing: Framing,
    private readonly opts: RunOptions,
  ) {}

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  /** A new, empty store directory. */
  newStore(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-conformance-'));
    this.stores.push(dir);
    return dir;
  }

  /**
   * The server under test on `store` (a fresh one unless given): `{store}` arguments name it,
   * and `{store-id}` inside any argument is replaced by a short id of it ([0-9a-f]{12}), for
   * stores that are not directories (e.g. `--pg-schema s_{store-id}`: a fresh schema per store).
   */
  spawn(store = this.newStore(), extra: { args?: string[]; env?: Record<string, string> } = {}): Peer {
    const id = createHash('sha256').update(store).digest('hex').slice(0, 12);
    // `extra.args` (options a scenario needs, e.g. an encryption key's) go after the command's own.
    const command = [...this.opts.command.map((a) => (a === '{store}' ? store : a.split('{store-id}').join(id))), ...(extra.args ?? [])];
    const peer = (this.opts.peer ?? ((o) => new PipePeer(o)))({
      command, framing: this.framing, timeoutMs: this.opts.timeoutMs, schema: this.schema,
      env: { ...process.env, SESSION_SIDECAR_STORE: store, ...extra.env },
    });
    this.peers.push(peer);
    return peer;
  }

  /** A server, initialized. */
  async started(store?: string): Promise<Peer> {
    const p = this.spawn(store);
    await p.initialize();
    return p;
  }

  /** Runs one check; a thrown error fails it. Returns whether it passed. */
  async check(name: string, body: () => unknown): Promise<boolean> {
    try {
      await body();
      this.record(name, 'pass');
      return true;
    } catch (e) {
      this.record(name, 'fail', e instanceof CheckFailure ? e.message : `${(e as Error).message ?? String(e)}`);
      return false;
    }
  }

  skip(name: string, why: string): void {
    this.record(name, 'skip', why);
  }

  record(check: string, status: Status, message?: string): void {
    this.opts.report({ scenario: this.scenario.name, check, framing: this.framing, status, ...(message ? { message } : {}) });
  }

  /** Ends the scenario: the wire-schema check, then every server killed and every store removed. */
  async finish(): Promise<void> {
    const v = this.schema.violations;
    this.record('wire-schema', v.length === 0 ? 'pass' : 'fail', v.length === 0 ? undefined : v.slice(0, 3).join('; ') + (v.length > 3 ? ` (and ${v.length - 3} more)` : ''));
    await Promise.all(this.peers.map((p) => p.kill('SIGKILL')));
    for (const dir of this.stores) fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- expectations -------------------------------------------------------------------------

export function expect(cond: unknown, message: string): asserts cond {
  if (!cond) throw new CheckFailure(message);
}

export function expectEqual(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new CheckFailure(`${what}: expected ${clip(e)}, got ${clip(a)}`);
}

/** The answer is an error with this code (and, for domain errors, this data.kind). */
export function expectError(a: Answer, code: number, kind?: string): NonNullable<Answer['error']> {
  if (!a.error) throw new CheckFailure(`expected error ${code}${kind ? ` ${kind}` : ''}, got a result ${clip(JSON.stringify(a.result))}`);
  if (a.error.code !== code) throw new CheckFailure(`expected error code ${code}, got ${a.error.code} (${clip(a.error.message)})`);
  if (kind !== undefined && a.error.data?.kind !== kind) throw new CheckFailure(`expected error data.kind ${kind}, got ${JSON.stringify(a.error.data?.kind)}`);
  return a.error;
}

export function expectResult<T = Record<string, unknown>>(a: Answer): T {
  if (a.error) throw new CheckFailure(`expected a result, got error ${a.error.code} ${clip(a.error.message)}`);
  return a.result as T;
}

function clip(s: string | undefined): string {
  const t = s ?? 'undefined';
  return t.length > 200 ? `${t.slice(0, 200)}…` : t;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
