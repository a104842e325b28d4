import { describe, expect, it } from 'vitest';
import { cwdStore } from './findKit.js';
import { explain, runCli } from './helpers.js';

/**
 * Times for people are local, and say their zone (issue 31, finding 4: "times are UTC without
 * saying so"); the stored text is printed as it is by --json, --raw and --format jsonl.
 */
const local = (iso: string, tz: string) => new Date(iso).toLocaleString('sv-SE', { timeZone: tz }); // "2026-12-06 01:24:58"

describe('local times', () => {
  it('show and export --format markdown print local times with the offset; --json and --raw the stored UTC text', async () => {
    const { root, ids } = await cwdStore();
    const env = { TZ: 'Asia/Tokyo' };
    const json = await runCli(['show', ids.old, '--json', '--store', root], { env });
    expect(json.code, explain(json)).toBe(0);
    const records = JSON.parse(json.stdout) as Array<{ seq: number; ts: string }>;
    const listed = JSON.parse((await runCli(['list', '--json', 'sessionId,createdAt', '--store', root], { env })).stdout) as Array<{ sessionId: string; createdAt: string }>;
    const shown = { session: listed.find((x) => x.sessionId === ids.old)! };
    expect(shown.session.createdAt).toMatch(/Z$/);
    const rec = records.at(-1)!;
    expect(rec.ts).toMatch(/Z$/);

    const text = await runCli(['show', ids.old, '--store', root], { env });
    expect(text.stdout).toContain(`created ${local(shown.session.createdAt, 'Asia/Tokyo')} +09:00`);
    expect(text.stdout).toContain(`#${rec.seq} ${local(rec.ts, 'Asia/Tokyo')}  `);
    expect(text.stdout).not.toContain(shown.session.createdAt);

    const ny = await runCli(['export', ids.old, '--format', 'markdown', '--store', root], { env: { TZ: 'America/New_York' } });
    expect(ny.stdout).toMatch(new RegExp(`\\*\\*Created:\\*\\* ${local(shown.session.createdAt, 'America/New_York')} -0[45]:00`));
    const raw = await runCli(['export', ids.old, '--format', 'jsonl', '--store', root], { env });
    expect(raw.stdout).toContain(`"ts":"${rec.ts}"`);
  }, 60_000);
});
