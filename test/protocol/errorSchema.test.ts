import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorKindCode, PROTOCOL_VERSION } from '../../protocol/index.js';
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
