import { summaryOf } from '../commands.js';
import { type Command, type CommandOptions, openStore, parseCommand, positiveInt, STORE_HELP, STORE_OPTIONS, UsageError } from '../common.js';
import { err, out } from '../output.js';
import { routes } from './routes.js';
import { newToken, startViewer } from './server.js';

const OPTIONS = { ...STORE_OPTIONS, port: { type: 'string' } } as const satisfies CommandOptions;

export const uiCommand: Command = {
  name: 'ui',
  summary: summaryOf('ui'),
  options: OPTIONS,
  usage: `Usage: session-sidecar ui [--port N] [options]

A read-only web viewer of the store, for your browser: the sessions (with a search), a session's
transcript as 'show' reads it (archived generations, usage and turn state included), and the
records appended later, live. It listens on 127.0.0.1 only and prints one line on stdout, the
address to open:
  http://127.0.0.1:PORT/?token=TOKEN
Every request needs that token (a fresh random one each run), else 403; only GET is served.
The store is opened read-only, as 'list' and 'show' do: safe while a sidecar is serving it.
Stops on Ctrl-C (SIGINT) or SIGTERM.

Options:
  --port N                 listen on port N (default: a free port)
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    const port = positiveInt(p.values.port as string | undefined, '--port', 0, 1);
    if (port > 65535) throw new UsageError('--port must be an integer from 1 to 65535', this.name);
    const store = await openStore(p.target);
    const token = newToken();
    const streams = new Set<() => void>();
    const onDone = (stop: () => void) => (streams.add(stop), () => void streams.delete(stop));
    let viewer;
    try {
      viewer = await startViewer(port, token, routes(store, token, onDone), (e) => err(`session-sidecar ui: ${(e as Error).message ?? String(e)}`));
    } catch (e) {
      await store.closeAll();
      const code = (e as { code?: string }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') throw new UsageError(`cannot listen on 127.0.0.1:${port} (${code === 'EADDRINUSE' ? 'in use' : 'not allowed'})`, this.name);
      throw e;
    }
    out(`http://127.0.0.1:${viewer.port}/?token=${token}\n`);
    const v = viewer;
    return new Promise<number>((resolve) => {
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        for (const sig of SIGNALS) process.removeListener(sig, stop);
        for (const s of [...streams]) s();
        void v.close().then(() => store.closeAll()).then(() => resolve(0), () => resolve(1));
      };
      for (const sig of SIGNALS) process.on(sig, stop);
    });
  },
};

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
