/** The environment variable every client reads for the sidecar's command line (clients/python, go, rust too). */
export const COMMAND_ENV = 'SESSION_SIDECAR_COMMAND';

/**
 * Splits a command line into words as a POSIX shell does without expansions (as the Go and
 * Python clients do): `'…'` literally, `"…"` with `\"`, `\\`, `\$` and `` \` `` as escapes, a
 * backslash outside quotes escaping the next character. Throws on an unclosed quote.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`${COMMAND_ENV}: unclosed ' in ${JSON.stringify(line)}`);
      cur += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === '"') {
      inWord = true;
      for (i++; ; i++) {
        if (i >= line.length) throw new Error(`${COMMAND_ENV}: unclosed " in ${JSON.stringify(line)}`);
        const c = line[i]!;
        if (c === '"') break;
        if (c === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1]!)) cur += line[++i];
        else cur += c;
      }
    } else if (ch === '\\') {
      if (i + 1 < line.length) cur += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

