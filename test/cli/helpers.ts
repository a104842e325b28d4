import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSessionStore } from '../../src/stores/fileStore.js';
import type { RecordInput } from '../../src/domain/types.js';
import { captureOutput, type Run, tempDir } from '../helpers.js';

/** The BUILT binary: these tests run the command line as a user would. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'dist/src/cli.js');

export type { Run };

/** Runs `session-sidecar ...args` to completion (no color: stdout is a pipe; NO_COLOR unset unless given). */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...opts.env };
    delete env.SESSION_SIDECAR_STORE;
    if (opts.env?.SESSION_SIDECAR_STORE) env.SESSION_SIDECAR_STORE = opts.env.SESSION_SIDECAR_STORE;
    const child = spawn(process.execPath, [CLI, ...args], { env, cwd: opts.cwd ?? ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    void captureOutput(child).closed.then(resolve);
    child.on('error', reject);
    child.stdin.end(opts.input ?? '');
  });
}

/** A long-running CLI process (tail -f) with its output so far. */
export function startCli(args: string[]): { child: ChildProcess; output: () => string; errors: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { stdout, stderr, closed } = captureOutput(child);
  return { child, output: stdout, errors: stderr, exited: closed.then(({ code, signal }) => ({ code, signal })) };
}

export const explain = (r: Run) => `exit ${r.code} (signal ${r.signal})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const msg = (role: string, content: unknown, extra: Record<string, unknown> = {}): RecordInput => ({ kind: 'message', message: { role, content, ...extra } });
/** An assistant message with one tool call whose `arguments` (a BlobRef position, protocol/blobPositions.ts) is `args`. */
export const toolCall = (args: unknown): RecordInput => ({ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: args as string }] } });

export interface Fixture {
  root: string;
  /** A session with a turn, a tool call and its result, an event and an interruption. */
  chat: string;
  /** A compacted session: records 1-2 archived in generation 0, a checkpoint, then record 3. */
  compacted: string;
  /** A fork of `chat` at seq 3. */
  fork: string;
}

/** A store with three sessions, written through the store library (then closed). */
export async function makeStore(root = path.join(tempDir('sidecar-cli-'), 'store')): Promise<Fixture> {
  const store = new FileSessionStore(root, { leases: false });
  const { sessionId: chat } = await store.create({
    title: 'Fix the build', cwd: '/home/me/project', systemPrompt: 'You are a careful engineer.', llm: { provider: 'openai', model: 'gpt-test' },
  });
  const { turnId } = await store.startTurn(chat, 'user');
  await store.append(chat, [msg('user', 'Why does CI fail?')]);
  await store.transitionTurn(chat, turnId, { event: 'phase', phase: 'executingTools' });
  await store.append(chat, [msg('assistant', [{ type: 'text', text: 'Let me look at the log.' }], {
    toolCalls: [{ id: 'call_1', name: 'bash', arguments: '{"cmd":"cat ci.log","timeout":30}' }],
  })]);
  await store.append(chat, [msg('tool', Array.from({ length: 40 }, (_, i) => `log line ${i}`).join('\n'), { toolCallId: 'call_1' })]);
  await store.append(chat, [{ kind: 'event', type: 'tool.finished', payload: { ms: 12 } }]);
  await store.append(chat, [{ kind: 'interruption', reason: 'user cancelled', phase: 'executingTools', assistantText: 'The log says' }]);
  await store.transitionTurn(chat, turnId, { event: 'finish', outcome: 'interrupted' });

  const { sessionId: compacted } = await store.create({ title: 'Greetings' });
  await store.append(compacted, [msg('user', 'hi'), msg('assistant', 'hello')]);
  await store.compact(compacted, { summary: 'They greeted each other.', throughSeq: 2 });
  await store.append(compacted, [msg('user', 'again?')]);

  const { sessionId: fork } = await store.fork(chat, 3);
  await store.closeAll();
  return { root, chat, compacted, fork };
}

export const journalPath = (root: string, id: string) => path.join(root, 'sessions', id, 'journal.jsonl');

/** Every path under `dir` with its mode, size, mtime and bytes: "nothing changed" assertions. */
export function fullSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      const id = `${(st.mode & 0o7777).toString(8)} ${st.size} ${st.mtimeMs} ${st.ino}`;
      if (st.isDirectory()) {
        out[path.relative(dir, p) + '/'] = id;
        walk(p);
      } else out[path.relative(dir, p)] = `${id} ${fs.readFileSync(p).toString('base64')}`;
    }
  };
  walk(dir);
  return out;
}
