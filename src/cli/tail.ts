import { summaryOf } from './commands.js';
import type { OpenedSession, StoredRecord, SessionStore } from '../domain/types.js';
import { CliError, type Command, openSession, openStore, parseCommand, positiveInt, STORE_HELP, type CommandOptions, STORE_OPTIONS } from './common.js';
import { out, stdoutStyle } from './output.js';
import { recordsOf } from './records.js';
import { TranscriptRenderer } from './render.js';
import { CHOICE_HELP, CHOICE_OPTIONS, choiceOf, chosenId } from './sessionChoice.js';

/** Every option tail accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, lines: { type: 'string', short: 'n' }, follow: { type: 'boolean', short: 'f' }, raw: { type: 'boolean' }, full: { type: 'boolean' }, ...CHOICE_OPTIONS } as const satisfies CommandOptions;

export const tailCommand: Command = {
  name: 'tail',
  summary: summaryOf('tail'),
  options: OPTIONS,
  usage: `Usage: session-sidecar tail <session-id> | --last | --cwd DIR [-n N] [-f] [options]

Prints the last N records of a session in the transcript format of 'show'. With -f, then
prints every record appended later — by any process, such as a running sidecar — until
interrupted (Ctrl-C). A unique prefix of a session id is enough.

Options:
  -n, --lines N            how many records (default 20; 0: none, only what follows)
  -f, --follow             keep printing records as they are appended
  --raw                    the records as JSON Lines instead of the transcript
  --full                   do not abbreviate tool outputs, arguments and payloads
${CHOICE_HELP}
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 1, names: 'session id' });
    if (!p) return out(this.usage), 0;
    const choice = choiceOf(p, this.name);
    const n = positiveInt(p.values.lines as string | undefined, '-n', 20, 0);
    const store = await openStore(p.target);
    const session = await openSession(store, await chosenId(store, choice));
    const renderer = new TranscriptRenderer({ style: stdoutStyle(), full: p.values.full === true });
    const print = (r: StoredRecord) => out(p.values.raw ? `${JSON.stringify(r)}\n` : renderer.record(r));
    const cursor = await printLast(store, session, n, print);
    if (!p.values.follow) {
      await store.closeAll();
      return 0;
    }
    return follow(store, session.sessionId, cursor, print);
  },
};

/** Prints the last `n` records of the session; returns the seq to follow from. */
async function printLast(store: SessionStore, session: OpenedSession, n: number, print: (r: StoredRecord) => void): Promise<number> {
  let cursor = Math.max(0, session.lastSeq - n);
  if (n > 0) {
    for await (const r of recordsOf(store, session.sessionId, { afterSeq: cursor })) {
      print(r);
      cursor = r.seq;
    }
  }
  return Math.max(cursor, session.lastSeq);
}

/** Prints every record appended after `cursor` until a signal (exit 0) or the session can no longer be read (exit 1). */
function follow(store: SessionStore, id: string, cursor: number, print: (r: StoredRecord) => void): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const keepAlive = setInterval(() => {}, 1 << 30); // the store's poll timer does not keep the process alive
    let watch: { stop(): void } | undefined;
    let done = false;
    const finish = (code: number, failure?: Error) => {
      if (done) return;
      done = true;
      clearInterval(keepAlive);
      for (const sig of SIGNALS) process.removeListener(sig, onSignal);
      watch?.stop();
      void store.closeAll().finally(() => (failure ? reject(failure) : resolve(code)));
    };
    const onSignal = () => finish(0);
    for (const sig of SIGNALS) process.on(sig, onSignal);
    store.watch(id, cursor, (records) => {
      for (const r of records) print(r);
      return true;
    }, (reason) => {
      if (reason === 'error') finish(1, new CliError(`session ${id} can no longer be read (deleted, or damaged: 'session-sidecar verify ${id}' checks it)`));
      else finish(0);
    }).then((w) => {
      watch = w;
      if (done) w.stop();
    }, (err: unknown) => finish(1, err as Error));
  });
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
