/**
 * The published client (session-sidecar/client) when its sidecar is gone: a request sent after
 * the process ended fails at once (it used to wait forever), a command that cannot be spawned
 * rejects start() instead of crashing the host with an unhandled 'error' event, and a sidecar
 * that refused to start is reported with its own last stderr line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SidecarClient } from '../../dist/src/client/index.js';
import { tempDir } from '../helpers.js';

it('a request after the sidecar was killed fails at once, naming the exit', async () => {
  const c = await SidecarClient.start({ store: tempDir() });
  const inFlight = c.list({});
  c.child.kill('SIGKILL');
  await c.exited;
  await expect(inFlight).rejects.toThrow(/sidecar exited \(code null, signal SIGKILL\)/);
  const started = Date.now();
  await expect(c.list({})).rejects.toThrow(/sidecar exited \(code null, signal SIGKILL\)/);
  await expect(c.expectResponse(99)).rejects.toThrow(/sidecar exited/);
  expect(Date.now() - started).toBeLessThan(5_000); // settles, not a hang (vitest's timeout would say so too)
});

it('a command that cannot be spawned rejects start()', async () => {
  await expect(SidecarClient.start({ command: path.join(tempDir(), 'no-such-sidecar') })).rejects.toThrow(/could not be started: ENOENT/);
});

it('a sidecar that refuses to start is reported with its last stderr line', async () => {
  const file = path.join(tempDir(), 'not-a-dir');
  fs.writeFileSync(file, 'x');
  const err = await SidecarClient.start({ store: file }).then(() => undefined, (e: unknown) => e as Error);
  expect(err?.message).toMatch(/^sidecar exited \(code \d+, signal null\): .*not a directory/);
});
