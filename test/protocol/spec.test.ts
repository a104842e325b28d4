import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { methods } from '../../protocol/index.js';
import { TURN_CHANGING_KINDS } from '../../src/server/handlers/subscribe.js';
import { tempDir } from '../helpers.js';

/**
 * The reference must agree with the implementation, by class: capabilities meta.json names exist
 * in the real initialize result; every member of every params and result schema appears in its
 * method's section; the sections are numbered in order and all listed in the contents; examples
 * of initialize output are what the server sends.
 */
const ROOT = path.resolve(__dirname, '../..');
const README = fs.readFileSync(path.join(ROOT, 'protocol/README.md'), 'utf8');
const META = JSON.parse(fs.readFileSync(path.join(ROOT, 'protocol/meta.json'), 'utf8')) as { methods: Array<{ method: string; capability?: string }> };
const CLI = path.join(ROOT, 'dist/src/cli.js');

/** The initialize result of the built server, and the first line of its stdout. */
async function realInitialize(store: string): Promise<{ result: Record<string, unknown>; lines: string[] }> {
  const child = spawn('node', [CLI, '--store', store], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    + '{"jsonrpc":"2.0","id":2,"method":"session/create","params":{"title":"demo"}}\n');
  await new Promise((resolve) => child.on('close', resolve));
  const lines = out.trimEnd().split('\n');
  return { result: (JSON.parse(lines[0] as string) as { result: Record<string, unknown> }).result, lines };
}

/** The text of every section whose heading names `method` in backticks (each up to the next heading). */
function sectionOf(method: string): string | undefined {
  const lines = README.split('\n');
  const parts: string[] = [];
  lines.forEach((l, start) => {
    if (!/^#{2,4} /.test(l) || !l.includes(`\`${method}\``)) return;
    const end = lines.findIndex((x, i) => i > start && /^#{2,4} /.test(x));
    parts.push(lines.slice(start, end === -1 ? undefined : end).join('\n'));
  });
  return parts.length > 0 ? parts.join('\n') : undefined;
}

function members(schema: z.ZodType | undefined): string[] {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s instanceof z.ZodObject ? Object.keys(s.shape).filter((k) => k !== '_meta') : [];
}

describe('protocol/README.md and meta.json agree with the server', () => {
  it('every capability meta.json names exists in the real initialize capabilities', async () => {
    const { result } = await realInitialize(tempDir());
    const caps = result.capabilities as Record<string, unknown>;
    const missing = META.methods.filter((m) => m.capability !== undefined).filter((m) => {
      let v: unknown = caps;
      for (const part of (m.capability as string).split('.')) v = (v as Record<string, unknown> | undefined)?.[part];
      return v === undefined || v === false;
    }).map((m) => `${m.method}: ${m.capability}`);
    expect(missing).toEqual([]);
  });

  it('every member of every params and result schema appears in its method\'s section', () => {
    const missing: string[] = [];
    for (const m of methods) {
      const text = sectionOf(m.method);
      if (!text) {
        missing.push(`${m.method}: no section`);
        continue;
      }
      for (const [side, schema] of [['params', m.params], ['result', m.result]] as const) {
        for (const name of members(schema)) {
          if (!new RegExp(`\`[^\`]*\\b${name}\\b[^\`]*\``).test(text)) missing.push(`${m.method} ${side}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every option of `serve --help` has a row in section 1\'s option table and a place in its synopsis', async () => {
    const child = spawn('node', [CLI, 'serve', '--help'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let help = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (help += t));
    await new Promise((resolve) => child.on('close', resolve));
    const serveOptions = help.slice(help.indexOf('Options (serve):'));
    const flags = [...new Set([...serveOptions.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!))];
    expect(flags.length).toBeGreaterThan(10);
    const section = README.slice(README.indexOf('### Command line'), README.indexOf('## 2. Transport and framing'));
    const synopsis = /```\n([\s\S]*?)```/.exec(section)![1]!;
    const missing = flags.filter((f) => !new RegExp(`^\\| \`${f}[ \`]`, 'm').test(section) || !synopsis.includes(f));
    expect(missing).toEqual([]);
  });

  it('the methods table of section 4 has one row per method of meta.json, named', () => {
    const table = README.slice(README.indexOf('## 4. Methods'), README.indexOf('### 4.1 '));
    const named = [...table.matchAll(/^\| `([^`]+)` \| (?:request|notification)/gm)].map((m) => m[1]);
    expect(table).not.toMatch(/^\| \| /m); // a row without its method's name
    expect([...named].sort()).toEqual(META.methods.map((m) => m.method).sort());
    // Its Capability column is meta.json's (empty for a method without one).
    const columns = Object.fromEntries([...table.matchAll(/^\| `([^`]+)` \| (?:request|notification)[^|]*\|[^|]*\|[^|]*\| *`?([^`|]*?)`? *\|$/gm)].map((m) => [m[1], m[2]]));
    expect(columns).toEqual(Object.fromEntries(META.methods.map((m) => [m.method, m.capability ?? ''])));
  });

  it('section 2.4: each malformed frame of its table gets exactly the answer shown; a malformed notification none', async () => {
    const section = README.slice(README.indexOf('### 2.4 '), README.indexOf('### 2.5 '));
    const rows = [...section.matchAll(/^\| (?:bytes ([0-9a-f ]+)|`(.+?)`)[^|]*\| `(.+)` \|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const frames = rows.map((m) => (m[1] ? Buffer.from(m[1].replace(/ /g, ''), 'hex') : Buffer.from(m[2]!)));
    const child = spawn('node', [CLI, '--store', tempDir('ss-spec-malformed-')], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (out += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (err += t));
    child.stdin.write('{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}\n');
    for (const f of frames) child.stdin.write(Buffer.concat([f, Buffer.from('\n')]));
    child.stdin.end('{"jsonrpc":"1.0","method":"initialized"}\n');
    await new Promise((resolve) => child.on('close', resolve));
    const answers = out.trimEnd().split('\n').filter((l) => !l.includes('"id":"init"'));
    expect([...answers].sort()).toEqual(rows.map((m) => m[3]!).sort());
    expect(err).toContain('ignored a malformed notification');
  });

  it('the capabilities table of section 4.1 has a row for every capability the server sends, and only those', async () => {
    const { result } = await realInitialize(tempDir('ss-spec-caps-'));
    const leaves: string[] = [];
    const walk = (v: unknown, at: string) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`);
      else leaves.push(at);
    };
    walk(result.capabilities, 'capabilities');
    const section = README.slice(README.indexOf('### 4.1 '), README.indexOf('### 4.2 '));
    const rows = [...section.matchAll(/^\| `(capabilities\.[A-Za-z.]+)` \|/gm)].map((m) => m[1]!);
    expect(leaves.filter((l) => !rows.includes(l)), 'capabilities sent but not in the table').toEqual([]);
    // A row names a leaf, or (optional ones) a member the server adds only on some stores.
    const optional = ['capabilities.session.ephemeral.scratch'];
    expect(rows.filter((r) => !leaves.includes(r) && !optional.includes(r)), 'rows for capabilities never sent').toEqual([]);
  });

  it('sections 14.1 and 14.3 name exactly the record kinds after which the server sends turn/didChange', () => {
    // 14.1's sentence and 14.3's table row, each up to the notification's name / end of row.
    const prose = /When a delivered batch holds ([^.]*?)records, a\s+`turn\/didChange/.exec(README)?.[1];
    const row = /^\| `turn\/didChange` \| `\{sessionId[^|]*\|([^\n]*)$/m.exec(README.replace(/\\\|/g, ''))?.[1];
    const kinds = (text: string | undefined) => [...(text ?? '').matchAll(/`([a-z]+)`/g)].map((m) => m[1]).sort();
    expect(kinds(prose)).toEqual([...TURN_CHANGING_KINDS].sort());
    expect(kinds(row)).toEqual([...TURN_CHANGING_KINDS].sort());
  });

  it('every error-data path shown is in section 6.1\'s one grammar (what the server writes), never dotted indexes or pointers', () => {
    // §6.1: members after `.`, indexes `[i]`, other names `["name"]`, `<json>`, `<bytes>`; "" is the params object.
    const IDENT = '[A-Za-z_$][A-Za-z0-9_$]*';
    const NAME = '\\["(?:[^"\\\\]|\\\\.)*"\\]';
    const GRAMMAR = new RegExp(`^(?:(?:${IDENT}|\\[\\d+\\]|${NAME})(?:\\.${IDENT}|\\[\\d+\\]|${NAME}|<json>|<bytes>)*)?$`);
    const shown = [
      ...[...README.matchAll(/`path: "([^"`]*)"/g)].map((m) => m[1]!),
      ...[...README.matchAll(/"path":\s*("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string),
    ];
    expect(shown.length).toBeGreaterThan(10);
    // an array member (of the params, a record or a message) is followed by its index in brackets, if by anything
    const ARRAY_THEN_DOT = /(?:^|\.)(?:records|issues|toolCalls|tags|kinds|secrets|toolResults|initial)\./;
    expect(shown.filter((p) => !GRAMMAR.test(p) || ARRAY_THEN_DOT.test(p))).toEqual([]);
    // the grammar itself against what the server builds: a zod issue path and a walked secret path
    for (const p of ['records[1].direction', 'records[0].message.toolCalls[0].arguments<json>.api_key', 'records[0].dataBase64<bytes>', 'metadata["a-b"]', '']) expect(GRAMMAR.test(p), p).toBe(true);
    for (const p of ['records.1.direction', '/records/1/direction', 'records[1]..x']) expect(GRAMMAR.test(p), p).toBe(false);
    expect(ARRAY_THEN_DOT.test('records.N.direction')).toBe(true);
  });

  it('sections are numbered in order, and the contents list every one of them', () => {
    const numbers = [...README.matchAll(/^## (\d+)\. (.+)$/gm)].map((m) => Number(m[1]));
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    const contents = README.slice(0, README.indexOf('\n---\n'));
    for (const m of README.matchAll(/^## (\d+)\. (.+)$/gm)) expect(contents).toContain(`${m[1]}. [${m[2]}]`);
    const subs = [...README.matchAll(/^### (\d+)\.(\d+)\w* /gm)].map((m) => [Number(m[1]), Number(m[2])]);
    for (let i = 1; i < subs.length; i++) {
      const [a, b] = subs[i - 1] as number[];
      const [c, d] = subs[i] as number[];
      expect(c === a ? d === (b as number) + 1 : d === 1, `### ${c}.${d} after ${a}.${b}`).toBe(true);
    }
  });

  it('every initialize result shown is the one the server sends (modulo version and store root)', async () => {
    const { result } = await realInitialize(tempDir());
    const shown = [...README.matchAll(/"protocolVersion":1,"serverInfo":(\{[^\n]*)/g)];
    expect(shown.length).toBeGreaterThan(0);
    const norm = (r: Record<string, unknown>) => JSON.stringify({ ...r, serverInfo: { name: 'session-sidecar' }, store: {} });
    for (const m of README.matchAll(/^\{"jsonrpc":"2\.0","id":\d+,"result":\{"protocolVersion":1,.*$/gm)) {
      expect(norm((JSON.parse(m[0]) as { result: Record<string, unknown> }).result)).toBe(norm(result));
    }
    // the re-indented examples: their capabilities, member for member
    for (const m of README.matchAll(/```json\n(\{\s*"jsonrpc": "2\.0",\s*"id": \d+,\s*"result": \{\s*"protocolVersion": 1[\s\S]*?)```/g)) {
      expect(norm((JSON.parse(m[1] as string) as { result: Record<string, unknown> }).result)).toBe(norm(result));
    }
  });

  it('the quick start prints what the README shows, byte for byte modulo id, time, version and root', async () => {
    const store = tempDir();
    const { lines } = await realInitialize(store);
    const block = /### Quick start[\s\S]*?prints[\s\S]*?```\n([\s\S]*?)```/.exec(README)![1]!.trimEnd().split('\n');
    const norm = (l: string) => l.replaceAll(store, '/tmp/sidecar-demo').replace(/"version":"[^"]*"/, '"version":"V"')
      .replace(/"sessionId":"[0-9A-Z]{26}"/, '"sessionId":"ID"').replace(/"createdAt":"[^"]*"/, '"createdAt":"T"');
    expect(lines.map(norm)).toEqual(block.map(norm));
  });
});
