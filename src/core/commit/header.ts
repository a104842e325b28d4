import { StoreError } from '../../domain/errors.js';
import { guardValue } from '../../domain/secrets/gate.js';
import { MIN_SECRET_CHARS, SecretSet } from '../../domain/secrets/knownSecrets.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import { checkTags, sanitizeTitle } from '../../domain/sessionUpdate.js';
import { redactTokens } from '../../domain/secrets/tokenRules.js';
import type { ListPage, SecretsInput, SessionHeaderInput } from '../../domain/types.js';

/**
 * A new session's header members through the secret gate: the caller's input (and the names of
 * its secret env vars, never their values) as plain JSON, refused if it holds a registered
 * secret, well-known credentials redacted. The backend then seals it (a journal line, a row).
 */
export function guardHeader(input: SessionHeaderInput, secretsInput: SecretsInput, secrets: SecretSet): { value: SessionHeaderInput; redactions: Redaction[] } {
  if (input.tags !== undefined) checkTags(input.tags); // tags are a contract: never stored malformed
  const secretEnv = secretsInput.env?.length ? { secretEnv: [...new Set(secretsInput.env)] } : {};
  // A title is kept as session/update keeps one (one line, no control characters); one that is
  // empty after that is no title.
  const { title: given, ...rest } = input;
  const title = given === undefined ? '' : sanitizeTitle(given);
  const fields = JSON.parse(JSON.stringify({ ...rest, ...(title === '' ? {} : { title }), ...secretEnv })) as SessionHeaderInput;
  const guarded = guardValue(fields, secrets, 'header');
  return { value: guarded.value as SessionHeaderInput, redactions: guarded.redactions };
}

/** The final checks of a sealed header's exact bytes: its size, and no registered secret in any form. */
export function checkSealedHeader(bytes: Buffer, secrets: SecretSet, maxBytes: number): void {
  if (bytes.length > maxBytes) throw new StoreError('PayloadTooLarge', `session header is larger than ${maxBytes} bytes`);
  if (secrets.findInBytes(bytes)) throw new StoreError('SecretRejected', 'the session header contains a registered secret; nothing was written', { path: 'header', rule: 'raw' });
}

/**
 * `text` with every secret of `secrets`, the secrets named in `extra` (those of a request that
 * failed before they were registered) and every well-known credential redacted.
 */
export function scrubText(text: string, secrets: SecretSet, env: NodeJS.ProcessEnv, extra: SecretsInput = {}): string {
  const all = new SecretSet();
  all.addAll(secrets);
  for (const v of extra.values ?? []) if (typeof v === 'string' && v.length >= MIN_SECRET_CHARS) all.add(v);
  for (const name of extra.env ?? []) {
    const v = typeof name === 'string' ? env[name] : undefined;
    if (v && v.length >= MIN_SECRET_CHARS) all.add(v);
  }
  return redactTokens(all.scrub(text));
}

/**
 * Titles and message summaries are derived text (whitespace folded, parts joined): one that
 * holds a registered secret is left out of the answer.
 */
export function withoutSecretSummaries(page: ListPage, secrets: SecretSet): ListPage {
  if (secrets.size === 0) return page;
  const sessions = page.sessions.map((s) => {
    const out = { ...s };
    for (const key of ['title', 'firstMessage', 'lastMessage'] as const) {
      const text = out[key];
      if (typeof text === 'string' && secrets.findInText(text) !== undefined) delete out[key];
    }
    return out;
  });
  return { ...page, sessions };
}
