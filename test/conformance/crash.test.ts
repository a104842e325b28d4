import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { FRAMINGS, readAll, startSidecar } from './harness.js';

type Rec = { kind: 'message'; message: { role: string; content: string } };


describe.each(FRAMINGS)('SIGKILL during pipelined appends (%s)', (framing) => {
  it('loses no acknowledged record, keeps batches whole, and recovers on reopen', async () => {
    const store = tempDir();
    const acked = new Map<string, Map<number, Rec>>();
    const sessions: string[] = [];
    for (let round = 0; round < 4; round++) {
      const c = await startSidecar({ framing, store });
      if (round === 0) for (let i = 0; i < 2; i++) sessions.push((await c.create({ title: `s${i}` })).sessionId);
      for (const id of sessions) {
        const opened = await c.open({ sessionId: id });
        expect(opened.lastSeq).toBeGreaterThanOrEqual(Math.max(0, ...(acked.get(id)?.keys() ?? [])));
      }
      let acks = 0;
      const killAfter = 50 + Math.floor(Math.random() * 200);
      const inFlight: Array<Promise<unknown>> = [];
      for (let i = 0; i < 600; i++) {
        const sessionId = sessions[i % sessions.length]!;
        const n = 1 + (i % 4);
        const records: Rec[] = Array.from({ length: n }, (_, k) => ({
          kind: 'message', message: { role: 'user', content: `r${round}-a${i}-k${k}-${'p'.repeat(i % 300)}` },
        }));
        inFlight.push(c.append({ sessionId, records }).then((r) => {
          const map = acked.get(sessionId) ?? new Map<number, Rec>();
          records.forEach((rec, k) => map.set(r.firstSeq + k, rec));
          acked.set(sessionId, map);
          if (++acks === killAfter) c.child.kill('SIGKILL');
        }, () => undefined));
      }
      await Promise.all(inFlight);
      await c.exited;
    }
    const d = await startSidecar({ framing, store });
    let checked = 0;
    for (const sessionId of sessions) {
      await d.open({ sessionId });
      const records = await readAll(d, sessionId);
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
      const bySeq = new Map(records.map((r) => [r.seq as number, r]));
      for (const [seq, rec] of acked.get(sessionId) ?? []) {
        const { seq: _s, ts: _t, ...stored } = bySeq.get(seq) ?? {};
        expect(stored, `session ${sessionId} seq ${seq}`).toEqual(rec);
        checked += 1;
      }
      // Batches are whole: every record's batch mates (same append) are present.
      const byAppend = new Map<string, number>();
      for (const r of records) {
        const key = /^(r\d+-a\d+)-k/.exec((r.message as { content: string }).content)?.[1] ?? '';
        byAppend.set(key, (byAppend.get(key) ?? 0) + 1);
      }
      for (const [key, count] of byAppend) expect(count, key).toBe(1 + (Number(/a(\d+)/.exec(key)?.[1]) % 4));
    }
    expect(checked).toBeGreaterThan(0);
    await d.shutdown();
  });

  it('a torn tail is cut on a write open, kept as evidence, and reported', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create();
    await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'kept' } }] });
    await c.kill('SIGKILL');
    const file = path.join(store, 'sessions', sessionId, 'journal.jsonl');
    const tail = '{"seq":2,"ts":"2026-01-01T00:00:00.000Z","kind":"mess';
    fs.appendFileSync(file, tail);
    const d = await startSidecar({ framing, store });
    const reader = await d.read({ sessionId });
    expect(reader.lastSeq).toBe(1); // a reader never repairs, and never sees the fragment
    const opened = await d.open({ sessionId });
    expect(opened.lastSeq).toBe(1);
    expect(opened.recovered?.bytes).toBe(Buffer.byteLength(tail));
    const evidence = path.join(store, opened.recovered!.evidence);
    expect(fs.readFileSync(evidence, 'utf8')).toBe(tail);
    expect(fs.statSync(evidence).mode & 0o777).toBe(0o600);
    expect(await d.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'next' } }] })).toEqual({ firstSeq: 2, lastSeq: 2 });
  });
});
