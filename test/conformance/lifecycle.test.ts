import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { parseFrames } from './frames.js';
import { CLI, FRAMINGS, SidecarClient, SidecarError, spawnSidecar, startSidecar, rejection } from './harness.js';

const userMessage = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });


describe.each(FRAMINGS)('lifecycle over %s', (framing) => {
  it('initialize answers the version, server info, capabilities and store root', async () => {
    const store = tempDir();
    const c = spawnSidecar({ framing, store });
    const r = await c.initialize({ clientInfo: { name: 'test', version: '1' }, processId: process.pid });
    expect(r.protocolVersion).toBe(1);
    expect(r.serverInfo.name).toBe('session-sidecar');
    expect(r.store.root).toBe(store);
    expect(r.capabilities.framings).toEqual(['lsp', 'ndjson']);
    expect(r.capabilities.recordKinds).toEqual(['message', 'interruption', 'event', 'api', 'toolStart', 'toolFinish', 'toolStream']);
  });

  it('refuses requests before initialize with -32002 and a second initialize with -32600', async () => {
    const c = spawnSidecar({ framing });
    expect((await rejection(c.list())).code).toBe(-32002);
    await c.initialize();
    expect((await rejection(c.request('initialize', { protocolVersion: 1 }))).code).toBe(-32600);
  });

  it('refuses an unsupported protocol version with the supported list', async () => {
    const c = spawnSidecar({ framing });
    const err = await rejection(c.request('initialize', { protocolVersion: 2 }));
    expect(err.code).toBe(-31011);
    expect(err.data).toEqual({ kind: 'UnsupportedProtocolVersion', supported: [1], requested: 2 });
  });

  it('shutdown then exit ends with code 0; later requests are refused', async () => {
    const c = await startSidecar({ framing });
    expect(await c.request('shutdown')).toBeNull();
    expect((await rejection(c.list())).code).toBe(-32600);
    c.notify('exit');
    expect(await c.exited).toEqual({ code: 0, signal: null });
  });

  it('exit without shutdown ends with code 1, also when EOF follows at once', async () => {
    const c = await startSidecar({ framing });
    c.notify('exit');
    expect((await c.exited).code).toBe(1);
    const d = await startSidecar({ framing });
    d.notify('exit');
    expect((await d.end()).code).toBe(1);
  });

  it('answers unknown methods with -32601 and ignores unknown $/ notifications', async () => {
    const c = await startSidecar({ framing });
    c.notify('$/setTrace', { value: 'off' });
    c.notify('$/somethingNew', {});
    expect((await rejection(c.request('session/teleport', {}))).code).toBe(-32601);
    expect((await rejection(c.request('_vendor/thing', {}))).code).toBe(-32601);
    expect((await c.list()).sessions).toEqual([]);
  });

  it('on stdin EOF finishes in-flight appends, answers them, and exits 0', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    const appends = Array.from({ length: 20 }, (_, i) => c.append({ sessionId, records: [userMessage(`m${i}`)] }));
    const exited = c.end();
    const results = await Promise.all(appends);
    expect(results.map((r) => r.lastSeq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it('every request in input that ends at once is answered before the process exits', async () => {
    for (const finish of ['eof', 'exit'] as const) {
      const c = spawnSidecar({ framing });
      const frames = [c.frame({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } })];
      for (let i = 1; i <= 20; i++) frames.push(c.frame({ jsonrpc: '2.0', id: i, method: 'session/create', params: { title: `t${i}` } }));
      if (finish === 'exit') {
        frames.push(c.frame({ jsonrpc: '2.0', id: 21, method: 'shutdown' }), c.frame({ jsonrpc: '2.0', method: 'exit' }));
      }
      c.writeRaw(Buffer.concat(frames));
      const { code } = await c.end();
      expect(code, finish).toBe(0);
      const ids = parseFrames(Buffer.concat(c.stdout), framing).map((f) => f.id);
      expect(ids.sort((a, b) => Number(a) - Number(b)), finish).toEqual(Array.from({ length: finish === 'exit' ? 22 : 21 }, (_, i) => i));
    }
  });

  it('a request cancelled before it runs is answered -32800', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    // Both frames in one write: the cancel arrives while the request is still queued.
    const id = 'to-cancel';
    const answered = c.expectResponse(id);
    c.writeRaw(Buffer.concat([
      c.frame({ jsonrpc: '2.0', id, method: 'session/read', params: { sessionId } }),
      c.frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } }),
    ]));
    const err = await rejection(answered);
    expect(err.code).toBe(-32800);
  });
});

describe('a client that goes away', () => {
  it('EPIPE on stdout does not crash the server: it finishes, closes the store and exits 1 without noise', async () => {
    const store = tempDir();
    const child = spawn(process.execPath, [CLI, '--store', store], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.destroy();
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } });
    for (let i = 2; i < 40; i++) send({ jsonrpc: '2.0', id: i, method: 'session/create', params: { title: `t${i}` } });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    setTimeout(() => child.stdin.end(), 200);
    expect(await exited).toBe(1);
    expect(stderr).not.toMatch(/\n\s+at |Uncaught|EPIPE/);
  });
});

describe('the parent process watch', () => {
  it('exits when the processId given in initialize dies', async () => {
    const parent = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    const c = spawnSidecar();
    await c.initialize({ processId: parent.pid });
    parent.kill('SIGKILL');
    const { code } = await c.exited;
    expect(code).toBe(0);
  });
});

describe('the command line', () => {
  it('--help and --version print to stdout and exit 0', () => {
    const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--store DIR');
    const version = spawnSync(process.execPath, [CLI, '--version'], { encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('a bad flag is one clear line and exit 2', () => {
    const r = spawnSync(process.execPath, [CLI, '--framing', 'xml'], { encoding: 'utf8', input: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--framing must be auto, lsp or ndjson');
    expect(r.stdout).toBe('');
  });

  it('uses <workspace>/.session-sidecar by default and SESSION_SIDECAR_STORE when set', async () => {
    const ws = tempDir();
    const a = new SidecarClient({ args: ['--workspace', ws] });
    expect((await a.initialize()).store.root).toBe(`${ws}/.session-sidecar`);
    expect(fs.readFileSync(`${ws}/.session-sidecar/.gitignore`, 'utf8')).toBe('*\n');
    await a.shutdown();
    const env = tempDir();
    const b = new SidecarClient({ env: { ...process.env, SESSION_SIDECAR_STORE: env }, cwd: ws });
    expect((await b.initialize()).store.root).toBe(env);
    await b.shutdown();
  });
});
