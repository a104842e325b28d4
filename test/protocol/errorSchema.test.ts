import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODE, ERROR_DATA, ErrorKindCode, PROTOCOL_VERSION } from '../../protocol/index.js';
import { WireSchema } from '../../src/cli/conformance/wireSchema.js';
import { tempDir } from '../helpers.js';
import { RawSidecar } from './exampleDriver.js';

/**
 * Errors are a contract: schema.json names the error envelope (ErrorResponse) and real error
 * responses of the BUILT server validate against it. Needs `npm run build`.
 */
const schema = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../protocol/schema.json'), 'utf8')) as { $id: string; $defs: Record<string, unknown> };
const defs = schema.$defs;
const ajv = new Ajv2020({ strict: false });
ajv.addSchema(schema);
const validate = ajv.getSchema(`${schema.$id}#/$defs/ErrorResponse`)!;

describe('error envelope in schema.json', () => {
  it('has ErrorResponse with an integer code and a data definition per kind the reviewer named', () => {
    const env = defs.ErrorResponse as { properties: Record<string, { type?: string }> };
    expect(env.properties.code?.type).toBe('integer');
    for (const id of ['SessionLockedErrorData', 'ConflictErrorData', 'CorruptErrorData', 'InternalKindData', 'RequestCancelledErrorData', 'OutOfRangeData', 'InvalidParamsErrorData']) {
      expect(defs[id], id).toBeDefined();
    }
  });

  it('refuses an envelope without an integer code', () => {
    expect(validate({ code: 'x', message: 'm' })).toBe(false);
    expect(validate({ code: -31003.5, message: 'm' })).toBe(false);
    expect(validate({ code: -31003, message: 'm', data: { kind: 'Conflict' } })).toBe(true);
    expect(Object.keys(ErrorKindCode)).toContain('Conflict');
  });
});

describe('real error responses of the built server', () => {
  let s: RawSidecar;
  beforeAll(async () => {
    s = new RawSidecar(tempDir('sidecar-errs-'));
    await s.call({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION } });
    s.write(JSON.stringify({ jsonrpc: '2.0', method: 'initialized', params: {} }));
  });
  afterAll(async () => { await s.end(); });

  async function errorOf(id: number, method: string, params: unknown): Promise<{ code: number; data: { kind: string } }> {
    const { value } = await s.call({ jsonrpc: '2.0', id, method, params });
    const err = value.error as { code: number; data: { kind: string } };
    expect(err, JSON.stringify(value)).toBeDefined();
    expect(validate(err), JSON.stringify(validate.errors)).toBe(true);
    return err;
  }

  it('SessionNotFound, InvalidParams, Conflict and OutOfRange match ErrorResponse', async () => {
    expect((await errorOf(1, 'session/open', { sessionId: '00000000-0000-4000-8000-000000000000' })).data.kind).toBe('SessionNotFound');
    expect((await errorOf(2, 'session/open', { sessionId: 7 })).data.kind).toBe('InvalidParams');
    const created = await s.call({ jsonrpc: '2.0', id: 3, method: 'session/create', params: {} });
    const sessionId = (created.value.result as { sessionId: string }).sessionId;
    const append = (id: number, expectedLastSeq?: number) => ({ sessionId, expectedLastSeq, records: [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'x' }] } }] });
    await s.call({ jsonrpc: '2.0', id: 4, method: 'session/append', params: append(4) });
    expect((await errorOf(5, 'session/append', append(5, 99))).data.kind).toBe('Conflict');
    expect((await errorOf(6, 'session/rewind', { sessionId, toSeq: 1000 })).data.kind).toBe('OutOfRange');
  });
});

describe('every error kind is a named definition, and every request lists its errors', () => {
  const meta = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../protocol/meta.json'), 'utf8')) as {
    methods: Array<{ method: string; kind: string; errors?: Array<{ kind: string; code: number }> }>;
  };

  it('ERROR_DATA has one definition per domain kind plus InvalidParams, Internal and RequestCancelled; ErrorData maps each', () => {
    expect(Object.keys(ERROR_DATA).sort()).toEqual([...Object.keys(ErrorKindCode), 'InvalidParams', 'Internal', 'RequestCancelled'].sort());
    const union = defs.ErrorData as { oneOf: Array<{ $ref: string }>; discriminator: { mapping: Record<string, string> } };
    expect(Object.keys(union.discriminator.mapping).sort()).toEqual(Object.keys(ERROR_DATA).sort());
    for (const [kind, schemaOf] of Object.entries(ERROR_DATA)) {
      const id = (schemaOf.meta() as { id: string }).id;
      expect(defs[id], id).toBeDefined();
      expect(union.oneOf.map((r) => r.$ref)).toContain(`#/$defs/${id}`);
      // schema.json and the zod definition agree on the bare {kind} (accepted unless members are required).
      expect(validate({ code: ERROR_CODE[kind as keyof typeof ERROR_CODE], message: 'm', data: { kind } }), kind).toBe(schemaOf.safeParse({ kind }).success);
    }
    expect(validate({ code: -31003, message: 'm', data: { kind: 'NoSuchKind' } })).toBe(false);
  });

  it('README §6.2 lists every domain kind once, in code order, with its code', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../../protocol/README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### 6.2 Domain errors'), readme.indexOf('### 6.3'));
    const rows = [...section.matchAll(/^\| `(\w+)` \| (-\d+) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(Object.entries(ErrorKindCode).sort((a, b) => b[1] - a[1]));
  });

  it('meta.json gives every request its errors with their codes, and no notification any', () => {
    for (const m of meta.methods) {
      if (m.kind !== 'request') { expect(m.errors, m.method).toBeUndefined(); continue; }
      expect(m.errors, m.method).toBeDefined();
      for (const e of m.errors!) expect(e.code, `${m.method} ${e.kind}`).toBe((ErrorKindCode as Record<string, number>)[e.kind]);
    }
    const byMethod = new Map(meta.methods.map((m) => [m.method, (m.errors ?? []).map((e) => e.kind)]));
    expect(byMethod.get('session/append')).toEqual(expect.arrayContaining(['NotWritten', 'RolledBack', 'Uncertain', 'SecretRejected', 'Conflict']));
    expect(byMethod.get('session/rewind')).toContain('OutOfRange');
    expect(byMethod.get('initialize')).toEqual(['UnsupportedProtocolVersion']);
  });
});

describe('the conformance wire check holds a server to the error lists', () => {
  it('refuses a kind the method does not list, the wrong code, unknown kinds and data of the wrong shape', () => {
    const w = new WireSchema();
    const answer = (error: unknown, method = 'session/read') => w.serverMessage({ jsonrpc: '2.0', id: 1, error }, method);
    answer({ code: -31001, message: 'm', data: { kind: 'SessionNotFound', sessionId: 'x' } });
    answer({ code: -32602, message: 'm', data: { kind: 'InvalidParams', issues: [] } });
    expect(w.violations).toEqual([]);
    answer({ code: -31012, message: 'm', data: { kind: 'SecretRejected' } });
    expect(w.violations.pop()).toMatch(/session\/read answered SecretRejected/);
    answer({ code: -31004, message: 'm', data: { kind: 'SessionNotFound' } });
    expect(w.violations.pop()).toMatch(/code -31004/);
    answer({ code: -31001, message: 'm', data: { kind: 'Nope' } });
    expect(w.violations.pop()).toMatch(/not an error kind/);
    answer({ code: -31004, message: 'm', data: { kind: 'Corrupt', line: 0 } });
    expect(w.violations.pop()).toMatch(/Corrupt data/);
    answer({ code: -31001, message: 'm' });
    expect(w.violations.pop()).toMatch(/without data/);
    expect(w.violations).toEqual([]);
  });
});
