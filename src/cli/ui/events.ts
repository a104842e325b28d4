import type http from 'node:http';
import type { SessionStore } from '../../domain/types.js';
import { TranscriptModel } from './model.js';

/** How often an idle stream gets a comment line (keeps proxies and the browser from timing out). */
const PING_MS = 15_000;

/**
 * `/api/session/ID/events`: server-sent events, one `record` event per record committed after
 * `after` (its EntryView as JSON), driven by the store's watch as `tail -f` is; an `end` event
 * when the session can no longer be read. The watch stops when the client goes away or the
 * viewer stops (`onDone` registers the stop with the server's shutdown).
 */
export async function streamEvents(
  store: SessionStore, id: string, after: number, res: http.ServerResponse, onDone: (stop: () => void) => () => void,
): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  res.write(': connected\n\n');
  const model = new TranscriptModel();
  let watch: { stop(): void } | undefined;
  let closed = false;
  const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
  const stop = () => {
    if (closed) return;
    closed = true;
    clearInterval(ping);
    unregister();
    watch?.stop();
    res.end();
  };
  const unregister = onDone(stop);
  res.on('close', stop); // the client went away (or the server closed the connection)
  const w = await store.watch(id, after, (records) => {
    if (closed) return false;
    for (const r of records) res.write(`id: ${r.seq}\nevent: record\ndata: ${JSON.stringify(model.entry(r))}\n\n`);
    return true;
  }, (reason) => {
    if (!closed && reason === 'error') res.write('event: end\ndata: {"reason":"the session can no longer be read"}\n\n');
    stop();
  });
  watch = w;
  if (closed) w.stop();
}
