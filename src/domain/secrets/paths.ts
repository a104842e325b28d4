/** JSON paths as reported to clients: `message.toolCalls[0].arguments<json>.api_key`. */
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function memberPath(base: string, key: string): string {
  if (IDENT.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

export function indexPath(base: string, i: number): string {
  return `${base}[${i}]`;
}

/** A string that holds JSON text (a tool call's `arguments`, a stringified payload). */
export function parseNestedJson(s: string): unknown {
  const t = s.trimStart();
  const c = t[0];
  if (c !== '{' && c !== '[' && c !== '"') return undefined;
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

export const NESTED_JSON_LEVELS = 3;
