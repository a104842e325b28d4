/**
 * Items are stored as JSON and must read back as they were given, so addItems refuses, before
 * anything is sent, a value JSON would silently change: a non-finite number (NaN becomes null),
 * a bigint, function or symbol, an object that is not a plain object or array (a Uint8Array
 * becomes {"0": ...}, a Date a string, a Map {}), and a cycle. `undefined` members are allowed:
 * they are left out, as in every JSON copy the SDK makes. The error names where, never the value.
 */

function kindOf(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'object' || v === null) return typeof v;
  return (Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'object';
}

function check(value: unknown, path: string, ancestors: Set<object>): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return;
  } else if (typeof value === 'object') {
    if (ancestors.has(value)) throw new TypeError(`${path}: a cycle cannot be stored as JSON`);
    const proto = Object.getPrototypeOf(value) as unknown;
    if (Array.isArray(value) || proto === Object.prototype || proto === null) {
      ancestors.add(value);
      if (Array.isArray(value)) value.forEach((v, i) => check(v, `${path}[${i}]`, ancestors));
      else for (const [k, v] of Object.entries(value)) if (v !== undefined) check(v, `${path}.${k}`, ancestors);
      ancestors.delete(value);
      return;
    }
  }
  throw new TypeError(`${path}: a ${kindOf(value)} cannot be stored as JSON unchanged`);
}

/** Throws a TypeError naming the first item member JSON cannot keep exactly. */
export function assertJsonItems(items: readonly unknown[]): void {
  items.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new TypeError(`items[${i}]: an item must be an object`);
    check(item, `items[${i}]`, new Set());
  });
}
