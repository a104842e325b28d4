import * as z from 'zod';
import './index.js';

/** The vocabulary from the schemas' registry (generate.ts and the drift test). */
export function computeVocabulary(): readonly string[] {
  const words = new Set<string>(['seq', 'ts', 'batchEnd', 'crc', 'format', 'version', 'session-sidecar/journal',
    'user', 'assistant', 'system', 'tool', 'developer', '<redacted>', 'redacted', 'jsonrpc', '2.0']);
  const { schemas } = z.toJSONSchema(z.globalRegistry, { target: 'draft-2020-12' });
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (o.properties && typeof o.properties === 'object') for (const k of Object.keys(o.properties)) words.add(k);
    if (typeof o.const === 'string') words.add(o.const);
    if (Array.isArray(o.enum)) for (const e of o.enum) if (typeof e === 'string') words.add(e);
    Object.values(o).forEach(visit);
  };
  visit(schemas);
  return [...words].sort();
}
