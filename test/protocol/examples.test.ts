import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ErrorKindCode, JsonRpcErrorCode, methods } from '../../protocol/index.js';
import { StoredRecord } from '../../protocol/records.js';

/**
 * Every JSON example in the published reference is checked against the schemas the server
 * validates with: a request's params against its method, a result against the method of the
 * request with the same id shown before it, an error's code against its data.kind, a record
 * against StoredRecord. An example that drifts from the implementation fails here.
 */
const README = path.resolve(__dirname, '../../protocol/README.md');

interface Example { line: number; value: Record<string, unknown> }

function examples(file: string): { found: Example[]; unparsable: string[] } {
  const text = fs.readFileSync(file, 'utf8');
  const found: Example[] = [];
  const unparsable: string[] = [];
  const re = /```json\n([\s\S]*?)```/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const line = text.slice(0, m.index).split('\n').length + 1;
    const body = m[1] as string;
    try {
      found.push({ line, value: JSON.parse(body) as Record<string, unknown> });
      continue;
    } catch {
      // several one-line messages
    }
    body.split('\n').forEach((l, i) => {
      if (l.trim() === '') return;
      try {
        found.push({ line: line + i, value: JSON.parse(l) as Record<string, unknown> });
      } catch {
        unparsable.push(`line ${line + i}: ${l.slice(0, 80)}`);
      }
    });
  }
  return { found, unparsable };
}

const byMethod = new Map(methods.map((d) => [d.method, d]));
const codes: Record<string, number> = { ...JsonRpcErrorCode, ...ErrorKindCode };

function problems(schema: z.ZodType, value: unknown): string | undefined {
  const r = schema.safeParse(value);
  return r.success ? undefined : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

const checked = { params: 0, results: 0, errors: 0, records: 0 };

function check(e: Example, requests: Map<unknown, string>): string | undefined {
  const v = e.value;
  if (typeof v.method === 'string') {
    const d = byMethod.get(v.method);
    if (!d) return v.method.startsWith('$/') || v.method.startsWith('_') ? undefined : `unknown method ${v.method}`;
    if (v.id !== undefined) requests.set(v.id, v.method);
    checked.params += 1;
    return d.kind === 'request' && v.id === undefined ? 'a request without id' : problems(d.params, v.params ?? (d.params.safeParse(undefined).success ? undefined : {}));
  }
  if ('result' in v) {
    const method = requests.get(v.id);
    const d = method ? byMethod.get(method) : undefined;
    if (!d?.result) return undefined;
    checked.results += 1;
    return problems(d.result, v.result);
  }
  if ('error' in v) {
    const err = v.error as { code?: unknown; message?: unknown; data?: { kind?: unknown } };
    if (typeof err.code !== 'number' || typeof err.message !== 'string') return 'an error needs a numeric code and a message';
    checked.errors += 1;
    const kind = err.data?.kind;
    if (typeof kind === 'string' && codes[kind] !== undefined && codes[kind] !== err.code) return `code ${err.code} is not the code of ${kind} (${codes[kind]})`;
    return undefined;
  }
  if (typeof v.seq === 'number' && typeof v.kind === 'string') {
    checked.records += 1;
    return problems(StoredRecord, v);
  }
  return undefined;
}

describe('examples in protocol/README.md', () => {
  const { found, unparsable } = examples(README);

  it('are all valid JSON', () => {
    expect(unparsable).toEqual([]);
    expect(found.length).toBeGreaterThan(50);
  });

  it('match the schemas the server validates with', () => {
    const requests = new Map<unknown, string>();
    const failures = found.flatMap((e) => {
      const p = check(e, requests);
      return p ? [`line ${e.line}: ${p}`] : [];
    });
    expect(failures).toEqual([]);
    // the checks ran: most examples are requests, results and errors the schemas describe
    expect(checked.params).toBeGreaterThan(25);
    expect(checked.results).toBeGreaterThan(10);
    expect(checked.errors).toBeGreaterThan(10);
  });
});
