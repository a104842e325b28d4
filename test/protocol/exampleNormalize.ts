/**
 * What may differ between a README example and the server's frame for the same step: ids the
 * server generates (sessions, turns: mapped one to one onto the ids the README shows), times,
 * the server version, the store root, an internal-error reference, the name of a recovery
 * evidence file, and list cursors (compared decoded). Nothing else is normalized.
 */
const ULID = /\b[0-9A-HJKMNP-TV-Z]{26}\b/g;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

/** actual id ↔ shown id, one to one, learned in step order. */
export class IdMap {
  private readonly toShown = new Map<string, string>();
  private readonly toActual = new Map<string, string>();

  bind(actual: string, shown: string): void {
    if (this.toShown.has(actual) || this.toActual.has(shown)) return; // first binding wins; a clash shows as a mismatch
    this.toShown.set(actual, shown);
    this.toActual.set(shown, actual);
  }

  /** Binds every id the actual value has where the shown value has one, at the same place. */
  learn(actual: unknown, shown: unknown): void {
    if (typeof actual === 'string' && typeof shown === 'string') {
      if (new RegExp(`^${ULID.source}$`).test(actual) && new RegExp(`^${ULID.source}$`).test(shown)) this.bind(actual, shown);
      return;
    }
    if (Array.isArray(actual) && Array.isArray(shown)) actual.forEach((a, i) => this.learn(a, shown[i]));
    else if (actual && shown && typeof actual === 'object' && typeof shown === 'object') {
      for (const [k, a] of Object.entries(actual)) this.learn(a, (shown as Record<string, unknown>)[k]);
    }
  }

  /** The actual frame in the README's ids. */
  shownIds(text: string): string {
    return text.replace(ULID, (id) => this.toShown.get(id) ?? id);
  }

  /** A README request in the server's ids. */
  actualIds(text: string): string {
    return text.replace(ULID, (id) => this.toActual.get(id) ?? id);
  }
}

function decodeCursor(c: string): unknown {
  try {
    return JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
  } catch {
    return c;
  }
}

function norm(v: unknown, key: string, parentKey: string, ids?: IdMap): unknown {
  if (typeof v === 'string') {
    if ((key === 'cursor' || key === 'nextCursor') && !v.includes(' ')) {
      const decoded = JSON.stringify(decodeCursor(v) ?? null);
      return `cursor:${JSON.stringify(norm(JSON.parse(ids ? ids.shownIds(decoded) : decoded), '', ''))}`;
    }
    if (key === 'version' && parentKey === 'serverInfo') return '<version>';
    if (key === 'root' && parentKey === 'store') return '<root>';
    if (key === 'ref' && /^[0-9a-f]{8}$/.test(v)) return '<ref>';
    return v.replace(ISO, '<ts>').replace(/reference [0-9a-f]{8}\b/, 'reference <ref>').replace(/\/\d+-\d+\.torn$/, '/<n>.torn');
  }
  if (Array.isArray(v)) return v.map((x) => norm(x, '', parentKey, ids));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x, k, key, ids)]));
  return v;
}

/** The value (as the README shows it) with times, version, root, refs and evidence names replaced and cursors decoded. */
export function normalize(v: unknown): unknown {
  return norm(v, '', '');
}

/** An actual frame as the README would show it: ids mapped, then normalized. */
export function normalizeActual(actual: unknown, ids: IdMap): unknown {
  return norm(JSON.parse(ids.shownIds(JSON.stringify(actual))), '', '', ids);
}
