/**
 * Finds the top-level "id" of a JSON-RPC message from a prefix of its text, without parsing
 * the rest (the message may be too large to keep). Nested "id" members (inside params) are
 * ignored by tracking depth and strings. Undefined when the prefix does not show it.
 */
export function sniffId(prefix: string): string | number | undefined {
  let depth = 0;
  let i = 0;
  while (i < prefix.length) {
    const c = prefix[i];
    if (c === '"') {
      const end = stringEnd(prefix, i);
      if (end === -1) return undefined;
      if (depth === 1 && prefix.slice(i, end + 1) === '"id"') {
        const value = valueAfterColon(prefix, end + 1);
        if (value !== 'continue') return value;
      }
      i = end + 1;
      continue;
    }
    if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
    i += 1;
  }
  return undefined;
}

function stringEnd(s: string, start: number): number {
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === '\\') i += 1;
    else if (s[i] === '"') return i;
  }
  return -1;
}

function valueAfterColon(s: string, from: number): string | number | undefined | 'continue' {
  const m = /^\s*:\s*/.exec(s.slice(from, from + 64));
  if (!m) return 'continue'; // "id" was a value, not a key
  const rest = s.slice(from + m[0].length);
  const num = /^-?\d{1,15}(?=[\s,}])/.exec(rest);
  if (num) return Number(num[0]);
  if (rest.startsWith('"')) {
    const end = stringEnd(rest, 0);
    if (end === -1 || end > 1024) return undefined;
    try {
      return JSON.parse(rest.slice(0, end + 1)) as string;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
