import * as z from 'zod';
import { Seq, Count } from './common.js';

export const EnvVarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name');

/** Secrets a session must never persist: env var names (resolved by the sidecar) and values. */
export const SecretsParam = z
  .strictObject({
    env: z.array(EnvVarName).max(64).optional().meta({
      description: 'Names of environment variables (of the sidecar process) whose values are secrets; the names are stored, never the values',
    }),
    values: z.array(z.string()).max(256).optional().meta({
      description: 'Secret values, kept in memory only (send them again on session/open); at least 8 characters each',
    }),
  })
  .meta({ id: 'SecretsParam' });

export const SecretsStatus = z
  .object({
    registered: Count.meta({ description: 'How many distinct secrets guard the session in this process' }),
    unsetEnv: z.array(z.string()).optional().meta({ description: 'Named environment variables that are not set (nothing to guard)' }),
  })
  .meta({ id: 'SecretsStatus' });

export const Redaction = z
  .object({
    seq: Seq.meta({ description: 'The record redacted (0: the session header)' }),
    path: z.string().meta({ description: 'Where, within the record: e.g. message.toolCalls[0].arguments<json>.api_key' }),
    rule: z.string().meta({ description: 'credential-key, or the token rule that matched (github-token, jwt, ...)' }),
  })
  .meta({ id: 'Redaction' });

/** The store's record of an idempotencyKey: the key, a digest of what it wrote, and the original result (§6.3). */
export const IdempotencyStamp = z.strictObject({
  key: z.string(), digest: z.string(), firstSeq: Seq, lastSeq: Seq, redactions: z.array(Redaction).optional(),
}).meta({ id: 'IdempotencyStamp' });

export type SecretsParam = z.infer<typeof SecretsParam>;
