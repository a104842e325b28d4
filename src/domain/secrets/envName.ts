import { entropy } from './rules/rule.js';
import { redactTokens } from './tokenRules.js';

/**
 * Whether a string given where the NAME of an environment variable belongs (`llm.apiKeyEnv`,
 * `secrets.env`) is one. Refused: what is not a name (`[A-Za-z_][A-Za-z0-9_]*`, at most 128
 * characters), a well-known credential format (a `ghp_…` token is also a valid name), and a
 * secret-shaped name — a random run of letters and digits such as a pasted key. The reason
 * never holds the name: a refused name may be the secret itself, so it is echoed nowhere (not
 * in the error, not in `secrets.unsetEnv`).
 */
export type EnvNameCheck = { ok: true } | { ok: false; reason: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkEnvName(name: string): EnvNameCheck {
  if (typeof name !== 'string' || name.length === 0) return { ok: false, reason: 'an environment variable name must be a non-empty string' };
  if (name.length > 128) return { ok: false, reason: 'an environment variable name has at most 128 characters' };
  if (!NAME.test(name)) return { ok: false, reason: 'not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)' };
  if (redactTokens(name) !== name || name.split('_').some(secretShapedPart)) {
    return { ok: false, reason: 'this looks like a credential, not the name of an environment variable' };
  }
  return { ok: true };
}

/**
 * A part of a name between `_` that looks random: 16+ characters, letters and digits
 * alternating three times or more (a word with a version, `Service2`, alternates once), and
 * 3.5 bits of entropy per character or more.
 */
function secretShapedPart(part: string): boolean {
  if (part.length < 16) return false;
  const switches = part.match(/[A-Za-z](?=\d)|\d(?=[A-Za-z])/g)?.length ?? 0;
  return switches >= 3 && entropy(part) >= 3.5;
}
