/** An independent, strict parser of the sidecar's stdout: every byte must belong to a frame. */
export function parseFrames(bytes: Buffer, framing: 'lsp' | 'ndjson'): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  if (framing === 'ndjson') {
    const text = bytes.toString('utf8');
    if (text.length > 0 && !text.endsWith('\n')) throw new Error('stdout does not end with a newline');
    for (const line of text.split('\n').slice(0, -1)) out.push(JSON.parse(line) as Record<string, unknown>);
  } else {
    let pos = 0;
    while (pos < bytes.length) {
      const headerEnd = bytes.indexOf('\r\n\r\n', pos);
      if (headerEnd === -1) throw new Error(`garbage at stdout offset ${pos}`);
      const m = /^Content-Length: (\d+)$/m.exec(bytes.toString('ascii', pos, headerEnd));
      if (!m) throw new Error(`frame without Content-Length at offset ${pos}`);
      const start = headerEnd + 4;
      const end = start + Number(m[1]);
      if (end > bytes.length) throw new Error('truncated frame');
      out.push(JSON.parse(bytes.toString('utf8', start, end)) as Record<string, unknown>);
      pos = end;
    }
  }
  for (const f of out) if (f.jsonrpc !== '2.0') throw new Error('frame without jsonrpc 2.0');
  return out;
}
