import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect, expectEqual, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { canonical, readAll, user } from './util.js';

const KEY_ENV = 'SIDECAR_CONFORMANCE_KEY';

/** Every file's bytes under a store directory. */
function filesUnder(dir: string): Array<{ rel: string; bytes: Buffer }> {
  const out: Array<{ rel: string; bytes: Buffer }> = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push({ rel: path.relative(dir, p), bytes: fs.readFileSync(p) });
    }
  };
  walk(dir);
  return out;
}

/**
 * §20: a file store advertises capabilities.encryptionAtRest; started with --encryption-key-env
 * it is active, writes no plaintext of the header, records or state values to any file, reads
 * everything back after a restart with the key, and is refused without the key or with another.
 * (Skipped for a server that does not advertise it. With a PostgreSQL store the files checked
 * are those of its workspace only: test/conformance/encryption.test.ts checks the schema.)
 */
export const encryption: Scenario = {
  name: 'encryption',
  summary: 'encryption at rest: advertised; with a key no plaintext reaches the store; reads back after a restart; refused without the key',
  async run(t) {
    const probe = t.spawn();
    const init = await probe.initialize();
    await probe.shutdown();
    const advertised = (init.capabilities as Json).encryptionAtRest as Json | undefined;
    if (!advertised) {
      t.skip('advertised', 'capabilities.encryptionAtRest is not advertised');
      return;
    }
    await t.check('advertised', () => expectEqual(advertised, { algorithm: 'AES-256-GCM', active: false }, 'capabilities.encryptionAtRest without a key'));
    const store = t.newStore();
    const key = randomBytes(32).toString('base64');
    const withKey = (k = key) => ({ args: ['--encryption-key-env', KEY_ENV], env: { [KEY_ENV]: k } });
    const marker = `conformance-${randomBytes(6).toString('hex')}`;
    const p = t.spawn(store, withKey());
    const active = await p.initialize();
    await t.check('active', () => expectEqual((active.capabilities as Json).encryptionAtRest, { algorithm: 'AES-256-GCM', active: true }, 'capabilities.encryptionAtRest with a key'));
    const sessionId = (await p.call<{ sessionId: string }>('session/create', { title: `${marker} title`, metadata: { m: `${marker} metadata` } })).sessionId;
    await p.call('session/append', { sessionId, records: [user(`${marker} message one`), user(`${marker} message two`)] });
    await p.call('state/set', { sessionId, key: 'k', value: { v: `${marker} state` } });
    const written = await readAll(p, sessionId);
    await p.shutdown();
    await t.check('no-plaintext', () => {
      const forms = [marker, Buffer.from(marker).toString('base64').slice(0, 16), key];
      for (const f of filesUnder(store)) for (const form of forms) expect(!f.bytes.includes(form), `${form === key ? 'the key' : 'plaintext'} found in ${f.rel}`);
    });
    await t.check('reads-back', async () => {
      const q = t.spawn(store, withKey());
      await q.initialize();
      const opened = await q.call<Json>('session/open', { sessionId, mode: 'read' });
      expectEqual(opened.title, `${marker} title`, 'title');
      expectEqual(canonical(await readAll(q, sessionId)), canonical(written), 'records');
      expectEqual((await q.call<Json>('state/get', { sessionId, key: 'k' })).value, { v: `${marker} state` }, 'state value');
      await q.shutdown();
    });
    for (const [name, extra] of [['key-required', {}], ['wrong-key', withKey(randomBytes(32).toString('base64'))]] as const) {
      await t.check(name, async () => {
        const r = t.spawn(store, extra);
        const exit = await r.exited;
        expect(exit.code !== 0, `the server started on the encrypted store ${name === 'key-required' ? 'without a key' : 'with another key'}`);
        expect(!r.stderr.includes(key), 'the key on stderr');
      });
    }
  },
};
