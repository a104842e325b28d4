/**
 * src/generated/types.ts: one TypeScript type per definition of schema.json, by
 * json-schema-to-typescript, named as the definitions are (`SessionAppendParams`, `ErrorData`).
 */
import { compile } from 'json-schema-to-typescript';
import { HEADER, type Inputs, type Json } from './common.js';

/** Keywords that constrain a value; a node with none of them (only annotations) accepts any JSON value. */
const ASSERTIONS = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'const', 'enum', 'properties', 'items', 'additionalProperties', 'if'];

/**
 * json-schema-to-typescript reads a node that carries only annotations (`{"description": ...}`)
 * as an object, where JSON Schema means "any value"; its own `tsType` keyword says what JSON
 * Schema means (`unknown`). Nothing else of the schema is touched.
 */
export function anyValueAsUnknown(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anyValueAsUnknown);
  if (!node || typeof node !== 'object') return node;
  const n = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === 'properties' || k === '$defs'
    ? Object.fromEntries(Object.entries(v as Json).map(([pk, pv]) => [pk, anyValueAsUnknown(pv)])) : anyValueAsUnknown(v)]));
  return Object.keys(n).length > 0 && !ASSERTIONS.some((k) => k in n) ? { ...n, tsType: 'unknown' } : n;
}

export async function renderTypes({ schema }: Inputs): Promise<string> {
  const root = {
    title: 'Protocol', type: 'object', additionalProperties: false, $defs: anyValueAsUnknown(schema.$defs),
    properties: Object.fromEntries(Object.keys(schema.$defs).map((k) => [k, { $ref: `#/$defs/${k}` }])),
  };
  const body = await compile(root as never, 'Protocol', {
    bannerComment: '', unreachableDefinitions: true, additionalProperties: false, ignoreMinAndMaxItems: true, format: true,
  });
  // `Protocol` (every definition as a member) is the generator's scaffolding, not a protocol type.
  const withoutRoot = body.replace(/^export interface Protocol \{[\s\S]*?^\}\n/m, '');
  return `${HEADER}/* eslint-disable */\n// Every definition of protocol/schema.json (JSON Schema 2020-12), as a TypeScript type.\n\n${withoutRoot.trimEnd()}\n`;
}
