import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { SidecarClient, SidecarError, type SpawnOptions } from '../../dist/src/client/index.js';
import type { Framing } from '../../dist/src/framing/frameDecoder.js';
import { tempDir } from '../helpers.js';

/** The BUILT binary: conformance tests never import the server's source. */
export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/cli.js');
export const FRAMINGS: Framing[] = ['ndjson', 'lsp'];

const running: SidecarClient[] = [];

afterEach(async () => {
  for (const c of running.splice(0)) {
    if (c.child.exitCode === null && c.child.signalCode === null) await c.kill('SIGKILL');
  }
});

/** Spawns the built sidecar on a store (a fresh temp dir unless given). */
export function spawnSidecar(opts: SpawnOptions = {}): SidecarClient {
  const store = opts.store ?? tempDir('sidecar-store-');
  const client = new SidecarClient({ keepStdout: true, ...opts, store, args: opts.args ?? [] });
  running.push(client);
  return client;
}

export async function startSidecar(opts: SpawnOptions = {}): Promise<SidecarClient> {
  const client = spawnSidecar(opts);
  await client.initialize();
  return client;
}

export { SidecarClient, SidecarError } from '../../dist/src/client/index.js';

/** The SidecarError a request was answered with (fails the test if it succeeded). */
export async function rejection(p: Promise<unknown>): Promise<SidecarError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SidecarError);
  return err as SidecarError;
}

/** Every stored record of the session's active generation, page by page. */
export async function readAll(c: SidecarClient, sessionId: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let afterSeq = 0;
  for (;;) {
    const page = await c.read({ sessionId, afterSeq, limit: 500 });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}
