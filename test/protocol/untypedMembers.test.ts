import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * Issue 29, finding 9: no member of schema.json is a bare `{}` — a schema with no type and no
 * description says nothing to a client (or to its generated types). A member that may hold any
 * JSON value says so in its description (and that the value is kept exactly, numbers included).
 * `additionalProperties: {}` (an open object) and array `items` are not members and not checked.
 */
type Node = Record<string, unknown>;
const schema = JSON.parse(fs.readFileSync(new URL('../../protocol/schema.json', import.meta.url), 'utf8')) as { $defs: Record<string, Node> };

/** What makes a schema say something (anything but annotations such as `default` or `examples`). */
const TELLING = ['type', 'description', '$ref', 'anyOf', 'oneOf', 'allOf', 'const', 'enum', 'not', 'properties', 'items', 'if'];

/** Every member (a `properties` or `patternProperties` entry) below `node` whose schema is bare. */
function bareMembers(node: unknown, at: string, out: string[]): string[] {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    node.forEach((n, i) => bareMembers(n, `${at}[${i}]`, out));
    return out;
  }
  for (const [k, v] of Object.entries(node as Node)) {
    if ((k === 'properties' || k === 'patternProperties') && v && typeof v === 'object') {
      for (const [name, member] of Object.entries(v as Node)) {
        const m = member as Node;
        if (!m || typeof m !== 'object' || !TELLING.some((t) => Object.hasOwn(m, t))) out.push(`${at}.${name}`);
      }
    }
    bareMembers(v, `${at}.${k}`, out);
  }
  return out;
}

describe('schema.json: no untyped member', () => {
  it('every member of every definition has a type or a description (additionalProperties: {} aside)', () => {
    const found = bareMembers(schema.$defs, '$defs', []);
    expect(found).toEqual([]);
  });

  it('the check finds a bare member (it is not vacuous)', () => {
    expect(bareMembers({ X: { type: 'object', properties: { a: {}, b: { description: 'any JSON' } }, additionalProperties: {} } }, '$defs', []))
      .toEqual(['$defs.X.a']);
  });

  it('the members that hold any JSON value say so and say it is kept exactly', () => {
    const d = schema.$defs;
    const member = (def: string, ...path: string[]) => path.reduce<Node>((n, p) => (p === '[]' ? n.items : (n.properties as Node)[p]) as Node, d[def] as Node);
    const anyJson = [
      member('ChatMessage', 'content'), member('EventRecord', 'payload'), member('StoredEventRecord', 'payload'),
      member('InterruptionRecord', 'toolResults', '[]', 'result'), member('StoredInterruptionRecord', 'toolResults', '[]', 'result'),
    ];
    for (const m of anyJson) expect(m.description).toMatch(/any JSON value.*kept exactly/);
  });
});
