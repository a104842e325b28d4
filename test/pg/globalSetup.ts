/**
 * Vitest global setup for the PostgreSQL tests: provides a per-run directory where the first
 * test file that needs PostgreSQL starts the shared throwaway cluster (test/pg/pgServer.ts),
 * and stops that cluster at the end of the run. Starts nothing itself: a run without
 * PostgreSQL tests costs one mkdtemp.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { clusterTmpRoot, destroyCluster, type PgCluster } from './pgServer.js';

export default function setup(project: TestProject): () => void {
  const runDir = fs.mkdtempSync(path.join(clusterTmpRoot(), 'ss-pg-run-'));
  fs.chmodSync(runDir, 0o755);
  project.provide('pgRunDir', runDir);
  return () => {
    const info = path.join(runDir, 'cluster.json');
    if (fs.existsSync(info)) destroyCluster(JSON.parse(fs.readFileSync(info, 'utf8')) as PgCluster);
    fs.rmSync(runDir, { recursive: true, force: true });
  };
}
