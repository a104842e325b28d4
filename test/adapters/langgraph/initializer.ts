/**
 * The validation suite's initializer: each checkpointer gets a fresh store — a new temporary
 * directory, or a fresh schema of the test PostgreSQL cluster — and its own sidecar, the BUILT
 * binary; destroyed with both.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation';
import { SidecarCheckpointSaver } from '../../../dist/src/adapters/langgraph/index.js';
import { freshSchema } from '../../pg/pgServer.js';

export function initializerFor(backend: { pgUrl: () => Promise<string> } | 'file'): CheckpointSaverTestInitializer<SidecarCheckpointSaver> {
  const dirs = new WeakMap<SidecarCheckpointSaver, string>();
  return {
    checkpointerName: `session-sidecar SidecarCheckpointSaver (${backend === 'file' ? 'file' : 'postgres'} store)`,
    async createCheckpointer() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-langgraph-'));
      const saver = backend === 'file'
        ? await SidecarCheckpointSaver.open({ store: dir })
        : await SidecarCheckpointSaver.open({ store: await backend.pgUrl(), spawn: { args: ['--pg-schema', freshSchema('lg'), '--workspace', dir] } });
      dirs.set(saver, dir);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await saver.close();
      const dir = dirs.get(saver);
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export default initializerFor('file');
