/**
 * The method reference, protocol/METHODS.md, rendered from the method descriptors and the
 * generated JSON Schema (as LSP's specification pages are rendered from its meta model): for
 * every method its kind, direction, capability, `since`, summary, the section of the narrative
 * spec that explains it, and its params and result member by member; then every named
 * definition those reach. Nothing in it is written by hand: generate.ts writes it, and a test
 * fails when the committed file differs.
 */
import type { MethodDescriptor } from './common.js';
import { ERROR_CODE, ERROR_DATA, type ErrorDataKind } from './errorResponse.js';
import { ANY_REQUEST_ERRORS } from './methodErrors.js';

type Json = Record<string, unknown>;

/** GitHub's heading anchor: lower case, punctuation dropped, blanks to hyphens. */
export function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A compact type expression for a schema node; named definitions become links. */
export function typeOf(node: unknown, reached: Set<string>): string {
  const n = (node ?? {}) as Json;
  if (typeof n.$ref === 'string') {
    const name = refName(n.$ref);
    reached.add(name);
    return `[\`${name}\`](#${anchorOf(name)})`;
  }
  if ('const' in n) return `\`${JSON.stringify(n.const)}\``;
  if (Array.isArray(n.enum)) return n.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(n[k])) return (n[k] as unknown[]).map((x) => typeOf(x, reached)).join(' \\| ');
  }
  if (Array.isArray(n.allOf)) return (n.allOf as unknown[]).map((x) => typeOf(x, reached)).join(' & ');
  const bounds = (lo: string, hi: string, unit = '') => {
    const parts: string[] = [];
    if (typeof n[lo] === 'number' && n[lo] !== -Number.MAX_SAFE_INTEGER) parts.push(`≥ ${n[lo] as number}${unit}`);
    if (typeof n[hi] === 'number' && n[hi] !== Number.MAX_SAFE_INTEGER) parts.push(`≤ ${n[hi] as number}${unit}`);
    return parts.length > 0 ? ` (${parts.join(', ')})` : '';
  };
  switch (n.type) {
    case 'string':
      return `string${bounds('minLength', 'maxLength', ' chars')}${typeof n.pattern === 'string' ? ` matching \`${n.pattern}\`` : ''}`;
    case 'integer':
    case 'number':
      return `${n.type}${bounds('minimum', 'maximum')}`;
    case 'boolean':
    case 'null':
      return n.type;
    case 'array':
      return `array of ${typeOf(n.items, reached)}${bounds('minItems', 'maxItems', ' items')}`;
    case 'object': {
      const props = n.properties as Json | undefined;
      if (props && Object.keys(props).length > 0) return `object {${Object.keys(props).filter((k) => k !== '_meta').map((k) => `\`${k}\``).join(', ')}}`;
      const extra = n.additionalProperties;
      return extra && typeof extra === 'object' && Object.keys(extra).length > 0 ? `object of ${typeOf(extra, reached)}` : 'object';
    }
    default:
      if (Array.isArray(n.type)) return (n.type as string[]).join(' \\| ');
      return 'any JSON value';
  }
}

/** The rows of an object's members; an inline object's (or inline array element's) members follow as `a.b` / `a[].b`. */
function memberRows(def: Json, reached: Set<string>, prefix: string): string[] {
  const props = (def.properties ?? {}) as Record<string, Json>;
  const required = new Set((def.required ?? []) as string[]);
  const rows: string[] = [];
  for (const k of Object.keys(props).filter((x) => x !== '_meta')) {
    const p = props[k]!;
    rows.push(`| \`${prefix}${k}\` | ${typeOf(p, reached)} | ${required.has(k) ? 'yes' : 'no'} | ${cell(typeof p.description === 'string' ? p.description : '')} |`);
    const inline = (x: Json | undefined) => x !== undefined && x.type === 'object' && x.properties !== undefined;
    if (inline(p)) rows.push(...memberRows(p, reached, `${prefix}${k}.`));
    else if (p.type === 'array' && inline(p.items as Json | undefined)) rows.push(...memberRows(p.items as Json, reached, `${prefix}${k}[].`));
  }
  return rows;
}

/** The members table of an object schema (`_meta` is on every object: said once, at the top). */
function membersTable(def: Json, reached: Set<string>, withRequired: boolean): string[] {
  const rows = memberRows(def, reached, '');
  if (rows.length === 0) return ['No members.'];
  const head = withRequired ? ['| Member | Type | Required | Description |', '| --- | --- | --- | --- |'] : ['| Member | Type | Always present | Description |', '| --- | --- | --- | --- |'];
  return [...head, ...rows];
}

function definitionLines(name: string, def: Json, reached: Set<string>): string[] {
  const out = [`### ${name}`, ''];
  if (typeof def.description === 'string') out.push(cell(def.description), '');
  if (def.type === 'object' && def.properties) {
    out.push(...membersTable(def, reached, true));
    out.push('', def.additionalProperties === false ? 'Other members: refused.' : 'Other members: allowed (ignore those you do not know).');
  } else {
    out.push(`Type: ${typeOf(def, reached)}`);
  }
  return [...out, ''];
}

/** The narrative sections explaining `method`: the headings that name it in backticks. */
function narrativeLinks(method: string, readme: string): string[] {
  return readme.split('\n').filter((l) => /^#{2,4} /.test(l) && l.includes(`\`${method}\``)).map((h) => {
    const title = h.replace(/^#+ /, '');
    return `[${title.replace(/`/g, '')}](README.md#${anchorOf(title)})`;
  });
}

/** A request's error list: each kind with its code and a link to its data definition. */
function errorsLines(m: MethodDescriptor, reached: Set<string>): string[] {
  const line = (kind: ErrorDataKind): string => {
    const id = (ERROR_DATA[kind].meta() as { id: string }).id;
    reached.add(id);
    return `| \`${kind}\` | ${ERROR_CODE[kind]} | [\`${id}\`](#${anchorOf(id)}) |`;
  };
  const own = m.errors ?? [];
  return [
    '**Errors** (`error.data.kind`, `error.code`, the data\'s definition; [§6](README.md#6-errors)):', '',
    '| kind | code | data |', '|---|---|---|',
    ...own.map((k) => line(k)),
    ...ANY_REQUEST_ERRORS.map((k) => line(k)),
    '',
  ];
}

export function renderReference(notice: string, methods: readonly MethodDescriptor[], schema: Json, ids: (m: MethodDescriptor) => { params: string; result?: string }, readme: string): string {
  const defs = schema.$defs as Record<string, Json>;
  const reached = new Set<string>();
  const out: string[] = [
    `<!-- ${notice} -->`, '', '# session-sidecar protocol: method reference', '',
    'Every method and notification of the protocol, with its params and result member by member,',
    'rendered from the zod schemas (`schema.json` holds the same as JSON Schema). The narrative',
    'specification, [README.md](README.md), explains behaviour, ordering and errors. Every params',
    'and result object also takes `_meta` (an object, ignored). Unknown params members are refused',
    '(-32602); results may gain members in later versions: ignore those you do not know.', '',
    '## Methods', '',
    ...methods.map((m) => `- [\`${m.method}\`](#${anchorOf(m.method)}): ${m.summary}`), '',
  ];
  for (const m of methods) {
    const id = ids(m);
    const direction = m.direction === 'clientToServer' ? 'client → server' : 'server → client';
    out.push(`## ${m.method}`, '', `${m.kind === 'request' ? 'Request' : 'Notification'}, ${direction}. Since version ${m.since}.${m.capability ? ` Capability \`${m.capability}\`.` : ''}`, '', m.summary, '');
    const links = narrativeLinks(m.method, readme);
    if (links.length > 0) out.push(`Explained in ${links.join(', ')}.`, '');
    reached.add(id.params);
    out.push(`**Params** ([\`${id.params}\`](#${anchorOf(id.params)})):`, '', ...membersTable(defs[id.params]!, reached, true), '');
    if (m.kind === 'request') {
      if (id.result === undefined) out.push('**Result**: `null`.', '');
      else {
        reached.add(id.result);
        out.push(`**Result** ([\`${id.result}\`](#${anchorOf(id.result)})):`, '', ...membersTable(defs[id.result]!, reached, false), '');
      }
      out.push(...errorsLines(m, reached));
    }
  }
  out.push('## Definitions', '');
  // Definitions reach others: render until no new name appears.
  const done = new Set<string>();
  const body: string[] = [];
  for (;;) {
    const next = [...reached].filter((n) => !done.has(n)).sort();
    if (next.length === 0) break;
    for (const n of next) {
      done.add(n);
      if (defs[n]) body.push(...definitionLines(n, defs[n], reached));
    }
  }
  const order = [...done].sort();
  const byName = new Map<string, string[]>();
  let cur: string | undefined;
  for (const line of body) {
    if (line.startsWith('### ')) {
      cur = line.slice(4);
      byName.set(cur, []);
    }
    byName.get(cur!)!.push(line);
  }
  for (const n of order) out.push(...(byName.get(n) ?? []));
  return `${out.join('\n').trimEnd()}\n`;
}
