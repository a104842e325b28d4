import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A bare NDJSON driver of the BUILT binary for the README example scenarios: it writes the
 * exact text a step gives and keeps every frame the server writes, so a step's output is the
 * server's own frame (no client library in between that could reorder or drop members).
 */
export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/cli.js');

export type Frame = Record<string, unknown>;

export class RawSidecar {
  readonly child: ChildProcess;
  /** Every frame the server wrote to stdout, in order, as text and parsed. */
  readonly frames: Array<{ text: string; value: Frame }> = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private buffered = '';
  private waiters: Array<() => void> = [];

  constructor(store: string, opts: { env?: NodeJS.ProcessEnv; args?: string[] } = {}) {
    this.child = spawn(process.execPath, [CLI, '--store', store, ...(opts.args ?? [])], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
    });
    this.child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      this.buffered += s;
      for (let nl = this.buffered.indexOf('\n'); nl !== -1; nl = this.buffered.indexOf('\n')) {
        const text = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.frames.push({ text, value: JSON.parse(text) as Frame });
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.child.stdin!.on('error', () => {});
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => {
      for (const w of this.waiters.splice(0)) w();
      resolve(code);
    }));
  }

  /** Writes `text` (one or more NDJSON lines, newline added) exactly as given. */
  write(text: string): void {
    this.child.stdin!.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The first frame written after frame number `from` that answers `id`. */
  async answer(id: unknown, from = 0): Promise<{ text: string; value: Frame }> {
    for (;;) {
      const f = this.frames.slice(from).find((x) => 'id' in x.value && !('method' in x.value) && x.value.id === id);
      if (f) return f;
      if (this.child.exitCode !== null) throw new Error(`sidecar exited before answering ${String(id)}; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Writes a request and waits for its answer. */
  async call(request: string | Frame): Promise<{ text: string; value: Frame }> {
    const text = typeof request === 'string' ? request : JSON.stringify(request);
    const from = this.frames.length;
    this.write(text);
    return this.answer((JSON.parse(text) as Frame).id, from);
  }

  async end(): Promise<number | null> {
    this.child.stdin!.end();
    return this.exited;
  }

  kill(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exited;
  }
}
