import { StoreError } from '../errors.js';
import type { SecretsInput, SecretsStatus } from '../types.js';
import { refuseSecret, SecretSet, type Vocabulary } from './knownSecrets.js';
import { checkEnvName } from './envName.js';

export interface SecretSources {
  /** From the header: llm.apiKeyEnv and the env names stored at create. */
  apiKeyEnv?: string;
  headerEnv?: readonly string[];
  /** From the request. */
  input?: SecretsInput;
}

/**
 * Resolves a session's secrets: env var names in this process's environment, values as sent.
 * A value that would match everything is refused with the rule it breaks and where it came
 * from (an env var's name, or the index of a value) — never the value.
 */
export function resolveSecrets(
  sources: SecretSources,
  env: NodeJS.ProcessEnv,
  vocabulary: Vocabulary,
  into: SecretSet = new SecretSet(),
): { set: SecretSet; status: SecretsStatus } {
  const unsetEnv: string[] = [];
  const named: Array<[string, string]> = [];
  if (sources.apiKeyEnv) named.push([sources.apiKeyEnv, 'llm.apiKeyEnv']);
  for (const name of sources.headerEnv ?? []) named.push([name, 'secrets.env']);
  (sources.input?.env ?? []).forEach((name, i) => named.push([name, `secrets.env[${i}]`]));
  const accepted: string[] = [];
  for (const [name, path] of named) {
    const check = checkEnvName(name);
    if (!check.ok) throw new StoreError('InvalidArgument', check.reason, { path }); // never the name: it may be the secret
    const value = env[name];
    if (value === undefined || value === '') {
      if (!unsetEnv.includes(name)) unsetEnv.push(name);
      continue;
    }
    const why = refuseSecret(value, vocabulary);
    if (why) throw new StoreError('InvalidArgument', `the value of environment variable ${name} cannot be a secret: ${why}`, { path });
    accepted.push(value);
  }
  (sources.input?.values ?? []).forEach((value, i) => {
    const why = refuseSecret(value, vocabulary);
    if (why) throw new StoreError('InvalidArgument', `secrets.values[${i}] refused: ${why}`, { path: `secrets.values[${i}]` });
    accepted.push(value);
  });
  for (const v of accepted) into.add(v);
  return { set: into, status: { registered: into.size, ...(unsetEnv.length > 0 ? { unsetEnv } : {}) } };
}
