/**
 * Issue 31, finding 5, on a PostgreSQL store: `rekey --store postgres://...` over the built
 * binary in a pseudo-terminal draws "re-sealing N of M rows" (a step per committed page), and
 * a real Ctrl-C stops it between pages with a summary and exit 130. The store is refused until
 * the same command is run again; that run finishes the job (values already re-sealed are
 * skipped), and the store then verifies under the new key.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshSchema } from '../pg/pgServer.js';
import { pgSkip, pgUrl } from '../backends/postgres/pgTestKit.js';
import { explain, msg, runCli } from './helpers.js';
import { pgStore } from './pgCliKit.js';
import { cliLine, inPty } from './pty.js';

const KEY = randomBytes(32).toString('base64');
const SESSIONS = 4;
const RECORDS = 20_000; // 40 pages of 500 rows: seconds of work, a wide window for the Ctrl-C

describe.skipIf(pgSkip !== null)(`rekey of a PostgreSQL store in a pty${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  it('shows N of M rows; Ctrl-C stops it between pages (exit 130, a summary); refused until the rerun, which finishes it', async () => {
    const url = await pgUrl();
    const schema = freshSchema('pgrekeyprogress');
    const store = await pgStore(url, schema);
    for (let s = 0; s < SESSIONS; s++) {
      const { sessionId } = await store.create({ title: `s${s}` });
      for (let b = 0; b < RECORDS / SESSIONS / 500; b++) await store.append(sessionId, Array.from({ length: 500 }, (_, k) => msg('user', `${s}.${b}.${k} hello`)));
    }
    await store.closeAll();

    const args = ['rekey', '--store', url, '--pg-schema', schema, '--to-env', 'K', '--yes'];
    const r = await inPty(cliLine(args), { env: { K: KEY }, ready: ' rows', keys: ['\u0003'] });
    const shown = r.output.replace(/\r/g, '\n');
    expect(shown, r.output).toMatch(/rekey: re-sealing \d+ of \d+ rows \(\d+%\)/);
    expect(r.code, r.output).toBe(130);
    expect(shown).toMatch(/session-sidecar rekey: interrupted while re-sealing: \d+ of \d+ rows done .*run the same command again/);

    const refused = await runCli(['list', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'K'], { env: { K: KEY } });
    expect(refused.code, explain(refused)).not.toBe(0);
    expect(refused.stderr).toMatch(/rekey of this store was interrupted/);

    const again = await runCli(args, { env: { K: KEY } });
    expect(again.code, explain(again)).toBe(0);
    const m = /encrypted .*: (\d+) session\(s\), (\d+) value\(s\) rewritten, (\d+) already done/.exec(again.stdout);
    expect(m, explain(again)).not.toBeNull();
    expect(Number(m![1])).toBe(SESSIONS);
    expect(Number(m![3])).toBeGreaterThan(0); // the pages the interrupted run committed
    expect(Number(m![2]) + Number(m![3])).toBeGreaterThanOrEqual(RECORDS + SESSIONS);
    expect(again.stderr).not.toMatch(/\u001b\[2K/); // a pipe: no progress drawn
    expect(again.stderr).toMatch(new RegExp(`session-sidecar rekey: ${SESSIONS} session\\(s\\) encrypted \\(`));

    const v = await runCli(['verify', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'K'], { env: { K: KEY } });
    expect(v.code, explain(v)).toBe(0);
    const listed = await runCli(['list', '--store', url, '--pg-schema', schema, '--encryption-key-env', 'K', '--json'], { env: { K: KEY } });
    expect(listed.code, explain(listed)).toBe(0);
    expect(listed.stdout).toContain('"s3"');
  }, 180_000);
});
