/** Shared by the LangGraph checkpointer tests: temporary stores, savers closed after each test, checkpoints. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { Checkpoint } from '@langchain/langgraph-checkpoint';
import { SidecarCheckpointSaver } from '../../../dist/src/adapters/langgraph/index.js';

export { SidecarCheckpointSaver };
export { SidecarClient, SidecarError } from '../../../dist/src/client/index.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

export function later(fn: () => Promise<unknown>): void {
  cleanup.push(fn);
}

export function tmpStore(): string {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-langgraph-'));
  later(async () => fs.rmSync(store, { recursive: true, force: true }));
  return store;
}

/** A saver on `store`, closed after the test. */
export async function openSaver(store: string, opts: Omit<Parameters<typeof SidecarCheckpointSaver.open>[0] & object, 'store'> = {}): Promise<SidecarCheckpointSaver> {
  const saver = await SidecarCheckpointSaver.open({ store, ...opts });
  later(() => saver.close()); // also after a SIGKILL of its sidecar: close() then does nothing
  return saver;
}

/** Time-ordered ids that sort as LangGraph's uuid6 do (string order = creation order). */
export const cpId = (i: number) => `1f000000-0000-6000-8000-${String(i).padStart(12, '0')}`;

export function checkpoint(id: string, values: Record<string, unknown>, versions: Record<string, number> = Object.fromEntries(Object.keys(values).map((k) => [k, 1]))): Checkpoint {
  return { v: 4, id, ts: '2026-12-01T00:00:00.000Z', channel_values: values, channel_versions: versions, versions_seen: { '': { someChannel: 1 } } };
}

/** Every file under `dir` (recursively) as one string, to look for bytes that must not be there. */
export function allBytes(dir: string): string {
  let out = '';
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out += fs.readFileSync(path.join(entry.parentPath, entry.name), 'latin1');
  }
  return out;
}
