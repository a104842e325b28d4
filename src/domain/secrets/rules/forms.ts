import { credentialStrength } from '../credentialKeys.js';
import { isPlaceholder, isReference, looksLikeSecretValue } from '../credentialValues.js';
import { R, re, type TokenRule } from './rule.js';

/**
 * Credentials known by the command line or the file they are written in (issue 27): long
 * options (`--token X`, `--password X`), the short options of commands that take a password
 * (`mysql -pX`, `sshpass -p X`, `docker login -p X`, `redis-cli -a X`, `openssl -passin pass:X`,
 * `keytool -storepass X`), `.netrc` (`login U password X`), XML settings (`<password>X</password>`,
 * `<add key="Password" value="X"/>`), base64 of a PEM private key (kubeconfig `client-key-data`)
 * and PuTTY `.ppk` private lines. `NAME=X` forms (`.npmrc _authToken=`, `.pypirc password:`,
 * `--password=X`, docker `"auth": "…"`) are the generic rule's (context.ts).
 */

const STOP = String.raw`\s"'\x60;&|<>(){}\[\]\\`;
/** A value after a blank: quoted, or bare up to a delimiter, never the next option (`-…`). Groups 1, 2, 3. */
const ARG = (n: number) =>
  String.raw`(?:"([^"\\\r\n]{1,${n}})"|'([^'\\\r\n]{1,${n}})'|((?![-$])[^${STOP}]{1,${n}})(?=[${STOP}]|$))`;
/** A value glued to its option (`-pX`). */
const GLUED = (n: number) => String.raw`(?:"([^"\\\r\n]{1,${n}})"|'([^'\\\r\n]{1,${n}})'|([^${STOP}-][^${STOP}]{0,${n}})(?=[${STOP}]|$))`;
/** The rest of a command line before an option, bounded; LINE ends in a blank. */
const REST = String.raw`[^\r\n]{0,200}?`;
const LINE = String.raw`${REST}[ \t]`;
const PEM_LINE_BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)`;

/** A password given to a command as such: anything but a placeholder or a reference. */
const isGivenPassword = (v: string) => !isPlaceholder(v) && !isReference(v);

/** The option's name (`--api-key X` → api-key) judged as a credential name, and its value. */
function namedOption(secret: string, match: string): boolean {
  const name = /^--([A-Za-z0-9-]+)/.exec(match)?.[1] ?? '';
  const strength = credentialStrength(name);
  return strength !== undefined && looksLikeSecretValue(secret, strength, true);
}

export const FORM_RULES: readonly TokenRule[] = [
  {
    id: 'cli-credential', description: 'long command-line options under a credential name, value after a blank (--token X, --password X, --client-secret X)',
    source: 'gitleaks:generic-api-key',
    examples: { redacted: ['vercel deploy --token {alnum:24}', 'argocd login cd.example.com --password "{alnum:16}"'], kept: ['docker login --password-stdin -u me', '--token $GITHUB_TOKEN', 'gh --token-file ./tok'] },
    keywords: ['--'], group: [1, 2, 3], accept: namedOption,
    pattern: re(String.raw`--[A-Za-z][A-Za-z0-9]{0,30}(?:-[A-Za-z0-9]{1,30}){0,4}[ \t]{1,4}${ARG(256)}`),
  },
  {
    id: 'cli-credential', description: 'mysql / mariadb -pPASSWORD (glued to the option)', source: 'https://dev.mysql.com/doc/refman/8.4/en/connecting.html',
    examples: { redacted: ['mysql -u root -p{alnum:12} app', 'mysqldump -uroot -p"{alnum:12}" db'], kept: ['mysql -u root -p app', 'mysql -u root -p$MYSQL_PWD'] },
    keywords: ['mysql', 'mariadb'], group: [1, 2, 3], accept: isGivenPassword,
    pattern: re(String.raw`(?:mysql(?:dump|admin|sh)?|mariadb(?:-dump)?)[ \t]${LINE}-p${GLUED(256)}`),
  },
  {
    id: 'cli-credential', description: 'sshpass -p PASSWORD', source: 'https://linux.die.net/man/1/sshpass',
    examples: { redacted: ["sshpass -p '{alnum:12}' ssh deploy@host"], kept: ['sshpass -e ssh host', 'sshpass -p "$PASS" ssh host'] },
    keywords: ['sshpass'], group: [1, 2, 3], accept: isGivenPassword,
    pattern: re(String.raw`sshpass[ \t]${REST}-p[ \t]{0,4}${ARG(256)}`),
  },
  {
    id: 'cli-credential', description: 'registry and cloud logins with -p PASSWORD (docker, podman, helm registry, az, cf, oc, skopeo, oras)',
    source: 'https://docs.docker.com/reference/cli/docker/login/',
    examples: { redacted: ['docker login -u me -p {alnum:16} registry.example.com', 'az login -u ann@example.com -p {alnum:16}'], kept: ['docker login -u me --password-stdin', 'docker run -p 8080:80 nginx'] },
    keywords: ['login'], group: [1, 2, 3], accept: isGivenPassword,
    pattern: re(String.raw`(?:docker|podman|nerdctl|buildah|skopeo|oras|registry|az|cf|oc)[ \t]{1,4}login[ \t]${LINE}-p[ \t]{1,4}${ARG(256)}`),
  },
  {
    id: 'cli-credential', description: 'redis-cli -a PASSWORD', source: 'https://redis.io/docs/latest/develop/tools/cli/',
    examples: { redacted: ['redis-cli -h cache -a {alnum:16} ping'], kept: ['redis-cli -h cache ping'] },
    keywords: ['redis-cli'], group: [1, 2, 3], accept: isGivenPassword,
    pattern: re(String.raw`redis-cli[ \t]${REST}-a[ \t]{1,4}${ARG(256)}`),
  },
  {
    id: 'cli-credential', description: 'openssl -passin / -passout / -pass pass:PASSWORD', source: 'https://docs.openssl.org/3.0/man1/openssl-passphrase-options/',
    examples: { redacted: ['openssl pkcs12 -export -in c.pem -passout pass:{alnum:14}'], kept: ['openssl rsa -in k.pem -passin env:KEY_PASS', 'openssl rsa -passin file:pw.txt'] },
    keywords: ['pass:'], group: [1, 2, 3], accept: isGivenPassword,
    pattern: re(String.raw`-pass(?:in|out)?[ \t]{1,4}pass:${GLUED(256)}`),
  },
  {
    id: 'cli-credential', description: 'keytool -storepass / -keypass PASSWORD', source: 'https://docs.oracle.com/en/java/javase/21/docs/specs/man/keytool.html',
    examples: { redacted: ['keytool -importcert -keystore ks.jks -storepass {alnum:12} -file c.crt'], kept: ['keytool -list -storepass:env STOREPASS'] },
    keywords: ['storepass', 'keypass'], group: [1, 2, 3], accept: isGivenPassword,
    pattern: re(String.raw`(?:store|key)pass[ \t]{1,4}${ARG(256)}`),
  },
  {
    id: 'netrc-password', description: '.netrc / _netrc passwords (login U password X, on one line or the next)', source: 'https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html',
    examples: { redacted: ['machine api.example.com login ann password {alnum:16}', 'machine api.heroku.com\n  login me@example.com\n  password {uuid}'], kept: ['login as admin, then change the password', 'login ann password $PASS'] },
    keywords: ['login'], group: [1, 2, 3], boundary: 'strict', accept: isGivenPassword,
    pattern: re(String.raw`login[ \t]{1,4}[^\s]{1,256}(?:[ \t]{1,8}|[ \t]{0,8}\r?\n[ \t]{0,8})password[ \t]{1,4}${ARG(256)}`),
  },
  {
    id: 'xml-credential', description: 'XML elements under a credential name (Maven settings.xml <password>, <token>)', source: 'https://maven.apache.org/settings.html#servers',
    examples: { redacted: ['<server><id>x</id><password>{alnum:16}</password></server>'], kept: ['<password>${env.MAVEN_PASSWORD}</password>', '<b>Password</b>'] },
    keywords: ['</'], group: 2,
    accept: (secret, match) => {
      const name = /^<([\w.:-]+)>/.exec(match)?.[1]?.split(':').pop() ?? '';
      const strength = credentialStrength(name);
      return strength !== undefined && looksLikeSecretValue(secret, strength, true);
    },
    pattern: re(String.raw`<([A-Za-z][\w.:-]{0,40})>([^<>\s]{1,256})(?=</\1>)`),
  },
  {
    id: 'xml-credential', description: '<add key="…Password" value="X"/> (NuGet.Config, web.config appSettings)', source: 'gitleaks:nuget-config-password',
    examples: { redacted: ['<add key="ClearTextPassword" value="{alnum:16}" />', '<add key="ApiKey" value="{alnum:32}"/>'], kept: ['<add key="Username" value="ann" />'] },
    keywords: ['<add'], group: 2,
    accept: (secret, match) => {
      const strength = credentialStrength(/key="([^"]*)"/.exec(match)?.[1] ?? '');
      return strength !== undefined && looksLikeSecretValue(secret, strength, true);
    },
    pattern: re(String.raw`<add[ \t]{1,4}key="([^"]{1,64})"[ \t]{1,4}value="([^"\r\n]{1,256})(?=")`),
  },
  {
    id: 'private-key-base64', description: 'base64 of a PEM private key (kubeconfig client-key-data, Helm values, CI variables)', source: 'https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/',
    examples: { redacted: ['client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo{b64:200}'], kept: ['client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg{b64:200}'] },
    keywords: ['ls0tls1crudjti'], boundary: 'strict',
    accept: (secret) => Buffer.from(secret.slice(0, 80), 'base64').toString('latin1').includes('PRIVATE KEY'),
    pattern: re(String.raw`LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,20000}={0,2}(?![A-Za-z0-9+/=])`),
  },
  {
    id: 'putty-private-key', description: 'PuTTY .ppk private lines', source: 'https://the.earth.li/~sgtatham/putty/0.81/htmldoc/AppendixC.html',
    examples: { redacted: ['PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{b64:44}\nPrivate-MAC: {hex:64}'], kept: ['Private-Lines: see the spec'] },
    keywords: ['private-lines:'], group: 1,
    pattern: re(String.raw`Private-Lines:[ \t]?\d{1,3}${PEM_LINE_BREAK}([A-Za-z0-9+/=]{1,64}(?:${PEM_LINE_BREAK}[A-Za-z0-9+/=]{1,64}){0,200})${R}`),
  },
];
