import fs from 'node:fs';

/**
 * The fenced examples of a Markdown file, with the marker comment just before each:
 * `<!-- server-output: STEP -->` (the block's server output is what scenario step STEP of
 * serverExamples.test.ts captures from the built binary) or `<!-- illustrative: REASON -->`
 * (not reproduced: e.g. it needs fault injection). A block holds one pretty-printed JSON value,
 * or one message per line, or LSP frames written `Content-Length: N\r\n\r\n{...}`.
 */
export type Value = Record<string, unknown>;

export interface Message {
  value: Value;
  /** The raw JSON text as shown. */
  text: string;
  /** The Content-Length the block states for it, when shown LSP-framed. */
  contentLength?: number;
}

export interface Block {
  file: string;
  line: number;
  lang: string;
  body: string;
  marker?: { kind: 'server-output' | 'illustrative'; arg: string };
  messages: Message[];
}

const SERVER_NOTIFICATIONS = new Set(['session/didAppend', 'session/didOverflow', 'turn/didChange']);

/** A message the server writes (a response or a server notification), a stored record or a blob reference. */
export function isServerOutput(v: Value): boolean {
  if (typeof v.method === 'string') return SERVER_NOTIFICATIONS.has(v.method);
  if ('result' in v || 'error' in v) return true;
  if (typeof v.seq === 'number' && typeof v.kind === 'string') return true;
  return typeof v.$blob === 'string';
}

function parseMessages(body: string): Message[] {
  const framed = [...body.matchAll(/Content-Length: (\d+)\\r\\n\\r\\n/g)];
  if (framed.length > 0) {
    return framed.map((m, i) => {
      const start = (m.index as number) + m[0].length;
      const text = body.slice(start, framed[i + 1]?.index ?? body.trimEnd().length);
      return { value: JSON.parse(text) as Value, text, contentLength: Number(m[1]) };
    });
  }
  try {
    const value = JSON.parse(body) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? [{ value: value as Value, text: body.trim() }] : [];
  } catch {
    // one message per line, or not JSON at all
  }
  const out: Message[] = [];
  for (const l of body.split('\n')) {
    if (!l.trim().startsWith('{')) continue;
    try {
      out.push({ value: JSON.parse(l) as Value, text: l.trim() });
    } catch {
      // a fragment of a multi-line request (e.g. §15.1): not a message of its own
    }
  }
  return out;
}

export function readBlocks(file: string): Block[] {
  const text = fs.readFileSync(file, 'utf8');
  const blocks: Block[] = [];
  const re = /^( *)```(\w*)\n([\s\S]*?)^\1```/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const before = text.slice(0, m.index).trimEnd();
    const prev = before.slice(before.lastIndexOf('\n') + 1).trim();
    const mk = /^<!-- (server-output|illustrative): (.+?) -->$/.exec(prev);
    const body = (m[3] as string).split('\n').map((l) => l.slice((m![1] as string).length)).join('\n');
    blocks.push({
      file,
      line: text.slice(0, m.index).split('\n').length,
      lang: m[2] as string,
      body,
      marker: mk ? { kind: mk[1] as 'server-output' | 'illustrative', arg: (mk[2] as string).trim() } : undefined,
      messages: parseMessages(body),
    });
  }
  return blocks;
}
