import type { AgentInputItem } from '@openai/agents-core';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SidecarSession } from '../../../dist/src/adapters/openaiAgents/index.js';
import { tempDir } from '../../helpers.js';
import { explain, hasPython311, run } from '../../pythonRun.js';

/**
 * The JS SidecarSession and clients/python's SidecarSession on one store and one session: each
 * reads, pops and appends what the other wrote, items byte for byte. Skipped with a printed
 * reason when python3 >= 3.11 is missing, except under CI=true.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const CI = process.env.CI === 'true';
const hasPython = hasPython311();
const skip = !hasPython && !CI;
if (skip) console.warn('skipping test/adapters/openaiAgents/python.test.ts: python3 (>= 3.11) is not on PATH');

/** Runs `body` (Python, inside `async def main(s)` with `s` the Python SidecarSession) on the session; returns what it printed. */
async function python(store: string, sessionId: string, body: string): Promise<unknown[]> {
  const script = [
    'import asyncio, json, sys',
    'from session_sidecar import SidecarSession',
    'def out(v): print(json.dumps(v, ensure_ascii=False, separators=(",", ":")))',
    'async def main(s):',
    ...body.trim().split('\n').map((l) => `    ${l.trim()}`),
    'async def run():',
    `    s = SidecarSession(session_id=${JSON.stringify(sessionId)}, store=${JSON.stringify(store)})`,
    '    try:',
    '        await main(s)',
    '    finally:',
    '        await s.close()',
    'asyncio.run(run())',
  ].join('\n');
  const r = await run('python3', ['-c', script], {
    cwd: ROOT, env: { PYTHONPATH: path.join(ROOT, 'clients/python/src'), SESSION_SIDECAR_COMMAND: `node ${JSON.stringify(CLI)}` },
  });
  expect(r.code, explain(r)).toBe(0);
  return r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
}

describe('interop with the Python SidecarSession', () => {
  it('python3 >= 3.11 is on PATH under CI', () => {
    if (CI) expect(hasPython, 'CI=true: python3 >= 3.11 must be installed').toBe(true);
  });

  it.skipIf(skip)('reads, pops and appends what the other wrote, byte for byte', async () => {
    const store = tempDir('sidecar-agents-py-');
    const js: AgentInputItem[] = [
      { role: 'user', content: 'Weather in Zürich? ☀️' },
      { type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'weather', arguments: '{"city":"Zürich"}', status: 'completed', providerData: { z: 1, a: 2 } },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny.' }] },
    ];
    const a = await SidecarSession.open({ store });
    const id = await a.getSessionId();
    await a.addItems(js);
    await a.close();

    const [all, popped, tail] = await python(store, id, `
      out(await s.get_items())
      out(await s.pop_item())
      await s.add_items([{"type": "function_call_output", "call_id": "call_1", "output": "21°C", "zeta": None, "alpha": [1.5, True]}])
      out(await s.get_items(2))
    `);
    expect(JSON.stringify(all)).toBe(JSON.stringify(js));
    expect(JSON.stringify(popped)).toBe(JSON.stringify(js[2]));
    const py = { type: 'function_call_output', call_id: 'call_1', output: '21°C', zeta: null, alpha: [1.5, true] };
    expect(JSON.stringify(tail)).toBe(JSON.stringify([js[1], py]));

    const b = await SidecarSession.open({ store, sessionId: id });
    expect(JSON.stringify(await b.getItems())).toBe(JSON.stringify([js[0], js[1], py]));
    expect(JSON.stringify(await b.popItem())).toBe(JSON.stringify(py));
    await b.addItems([{ role: 'user', content: 'thanks' }]);
    await b.close();

    const [after, empty] = await python(store, id, `
      out(await s.get_items())
      await s.clear_session()
      out(await s.get_items())
    `);
    expect(JSON.stringify(after)).toBe(JSON.stringify([js[0], js[1], { role: 'user', content: 'thanks' }]));
    expect(empty).toEqual([]);
    const c = await SidecarSession.open({ store, sessionId: id });
    expect(await c.getItems()).toEqual([]);
    await c.close();
  });
});
