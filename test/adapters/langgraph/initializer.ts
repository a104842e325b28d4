/**
 * The validation suite's CheckpointSaverTestInitializer: each checkpointer gets a fresh store
 * (a new temporary directory) and its own sidecar, the BUILT binary; destroyed with both.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation';
import { SidecarCheckpointSaver } from '../../../dist/src/adapters/langgraph/index.js';

const stores = new WeakMap<SidecarCheckpointSaver, string>();

const initializer: CheckpointSaverTestInitializer<SidecarCheckpointSaver> = {
  checkpointerName: 'session-sidecar SidecarCheckpointSaver',
  async createCheckpointer() {
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-langgraph-'));
    const saver = await SidecarCheckpointSaver.open({ store });
    stores.set(saver, store);
    return saver;
  },
  async destroyCheckpointer(saver) {
    await saver.close();
    const store = stores.get(saver);
    if (store) fs.rmSync(store, { recursive: true, force: true });
  },
};

export default initializer;
