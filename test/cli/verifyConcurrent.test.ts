import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { startSidecar } from '../conformance/harness.js';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { explain, msg, runCli } from './helpers.js';

/**
 * Issue 25, finding 7c: `verify` (the built binary) run again and again while a real sidecar
 * writes the same store — appends (some with blobs), compactions, state values, new sessions —
 * reports nothing a writer's normal operation explains: no error and no warning in any run.
 * (Notes, such as "open for writing by pid ...", are information.) Nothing is timed: the two
 * loops simply overlap for as many verify runs as the test makes. On a directory store and on
 * PostgreSQL (each session verified in one snapshot transaction there).
 */

type Finding = { severity: string; check: string; message: string; file?: string };
type Report = { ok: boolean; store: Finding[]; sessions: Array<{ sessionId: string; findings: Finding[] }> };

const RUNS = 12;

/** Where the sidecar serves and verify looks: a directory, or a PostgreSQL schema of the test cluster. */
async function target(backend: 'file' | 'postgres'): Promise<{ serve: { store: string; args?: string[] }; verify: string[] }> {
  if (backend === 'file') {
    const root = path.join(tempDir('sidecar-verify-live-'), 'store');
    return { serve: { store: root }, verify: ['--store', root] };
  }
  const url = await pgUrl();
  const schema = freshSchema('vlive');
  return { serve: { store: url, args: ['--pg-schema', schema, '--workspace', tempDir('sidecar-verify-ws-')] }, verify: ['--store', url, '--pg-schema', schema] };
}

describe.each((pgSkip ? ['file'] : ['file', 'postgres']) as Array<'file' | 'postgres'>)('verify beside a writing sidecar (%s)', (backend) => {
  it(`${RUNS} verify runs while a sidecar appends, compacts, stores blobs and state, creates sessions: no error, no warning`, async () => {
    const t = await target(backend);
    const c = await startSidecar(t.serve);
    const ids: string[] = [];
    const create = async () => {
      const { sessionId } = await c.create({ title: `s${ids.length}`, blobThreshold: 1024 });
      // Some history first, so that a check of the session takes a while.
      for (let b = 0; b < 10; b++) await c.request('session/append', { sessionId, records: Array.from({ length: 40 }, (_, k) => msg('user', `before ${b}.${k} ${'x'.repeat(100)}`)) });
      ids.push(sessionId);
      return sessionId;
    };
    for (let i = 0; i < 3; i++) await create();
    let stop = false;
    let rounds = 0;
    // One loop per session, all at once (the sidecar's commit queues run them side by side).
    const loop = async (id: string) => {
      for (let i = 0; !stop; i++) {
        const records = [msg('user', `round ${i}`), ...(i % 2 === 0 ? [msg('assistant', `${'long answer '.repeat(120)}${i}`)] : [])];
        const { lastSeq } = await c.request<{ lastSeq: number }>('session/append', { sessionId: id, records });
        if (i % 4 === 3) await c.request('session/compact', { sessionId: id, summary: `through round ${i}`, throughSeq: lastSeq - 1 });
        if (i % 3 === 1) await c.setState(id, 'progress', { round: i });
        rounds = Math.max(rounds, i + 1);
        // Paced: the store grows at a bounded rate, so each verify run has a bounded amount to read
        // however fast the writer is (a faster backend must not make the runs chase it).
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const writer = (async () => {
      const loops = ids.map(loop);
      for (let n = 0; n < 3 && !stop; n++) {
        await new Promise((r) => setTimeout(r, 300));
        if (!stop) loops.push(loop(await create())); // sessions created while verify runs
      }
      await Promise.all(loops);
    })();
    const reports: Array<{ r: Awaited<ReturnType<typeof runCli>>; problems: Finding[] }> = [];
    try {
      while (rounds < 2) await new Promise((r) => setTimeout(r, 20)); // the writer is under way
      for (let n = 0; n < RUNS; n++) {
        const r = await runCli(['verify', ...t.verify, '--json']);
        const report = JSON.parse(r.stdout) as Report;
        const problems = [...report.store, ...report.sessions.flatMap((s) => s.findings)].filter((f) => f.severity !== 'note');
        reports.push({ r, problems });
      }
    } finally {
      stop = true;
      await writer;
    }
    expect(rounds).toBeGreaterThan(2);
    for (const [n, { r, problems }] of reports.entries()) {
      expect(problems, `verify run ${n + 1} of ${RUNS} (writer at round ${rounds}):\n${explain(r)}`).toEqual([]);
      expect(r.code, explain(r)).toBe(0);
    }
    await c.shutdown();
    // Once the writer has stopped, verify is clean too (nothing was hidden that persists).
    const after = await runCli(['verify', ...t.verify, '--json', '--strict']);
    expect(after.code, explain(after)).toBe(0);
  }, 120_000);
});
