/**
 * A dedicated throwaway PostgreSQL cluster with TLS, for the TLS and credential tests (the
 * shared cluster's configuration is left alone): a self-signed CA, a server certificate for
 * 127.0.0.1 and localhost, client certificates, all made with `openssl` here; the server
 * listens on 127.0.0.1 and 127.0.0.2 (the second address is not in the certificate: the
 * host-name mismatch case).
 *
 * pg_hba.conf (first match wins):
 *   local   all all                 trust           (setup over the unix socket)
 *   hostssl all certuser 127/8      cert            (client certificate, CN = user)
 *   hostssl all sslonly  127/8      trust           (TLS only: the `allow` fallback)
 *   hostssl all pwuser   127/8      scram-sha-256
 *   host    all pwuser   127/8      scram-sha-256   (plaintext, when the server has ssl=off)
 *   host    all postgres 127/8      trust           (TLS or plaintext)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { clusterTmpRoot, destroyCluster, startCluster, startThrowawayCluster, stopCluster, type PgCluster } from '../../pg/pgServer.js';

export const DB_PASSWORD = 'db-pw-Wq7Ze3Rt9Yu1';
export const KEY_PASSPHRASE = 'key-pp-Hj5Kl8Mn2Bv4';

export interface TlsCluster {
  cluster: PgCluster;
  port: number;
  /** Where the certificates are (readable by this process; keys 0600). */
  dir: string;
  ca: string;
  otherCa: string;
  clientCert: string;
  clientKey: string;
  /** clientKey encrypted with KEY_PASSPHRASE. */
  clientKeyEncrypted: string;
  /** Runs SQL as the superuser over the unix socket. */
  sql(text: string): Promise<pg.QueryResultRow[]>;
  /** Turns the server's TLS off or on (restart). */
  setSsl(on: boolean): Promise<void>;
  destroy(): void;
}

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

function makeCerts(dir: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const ca of ['ca', 'other-ca']) {
    openssl(dir, 'req', '-x509', ...ec, '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-days', '3', '-subj', `/CN=session-sidecar test ${ca}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  }
  const leaf = (name: string, cn: string, ext: string) => {
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl(dir, 'req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '3', '-extfile', `${name}.ext`);
  };
  leaf('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'certuser', 'extendedKeyUsage=clientAuth\n');
  openssl(dir, 'pkey', '-in', 'client.key', '-aes256', '-passout', `pass:${KEY_PASSPHRASE}`, '-out', 'client-enc.key');
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.key')) fs.chmodSync(path.join(dir, f), 0o600);
}

export async function startTlsCluster(): Promise<TlsCluster> {
  const dir = fs.mkdtempSync(path.join(clusterTmpRoot(), 'ss-pg-tls-certs-'));
  makeCerts(dir);
  const cluster = await startThrowawayCluster(undefined, { listen: ['127.0.0.2'], trustNetworks: [] });
  const l = cluster.local!;
  const asRoot = process.getuid?.() === 0;
  // The server's copies, owned by the server's user (it refuses a key others can read).
  for (const f of ['server.crt', 'server.key', 'ca.crt']) {
    fs.copyFileSync(path.join(dir, f), path.join(l.dataDir, f));
    fs.chmodSync(path.join(l.dataDir, f), 0o600);
    if (asRoot) execFileSync('chown', ['postgres:', path.join(l.dataDir, f)]);
  }
  fs.writeFileSync(path.join(l.dataDir, 'pg_hba.conf'), [
    'local all all trust',
    'hostssl all certuser 127.0.0.0/8 cert',
    'hostssl all sslonly 127.0.0.0/8 trust',
    'hostssl all pwuser 127.0.0.0/8 scram-sha-256',
    'host all pwuser 127.0.0.0/8 scram-sha-256',
    'host all postgres 127.0.0.0/8 trust',
    '',
  ].join('\n'));
  const sql = async (text: string) => {
    const c = new pg.Client({ host: l.socketDir, port: l.port, user: 'postgres', database: 'postgres' });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  const restart = () => {
    stopCluster(cluster, 'fast');
    startCluster(cluster);
  };
  try {
    // ALTER SYSTEM runs outside a transaction: one statement per call.
    for (const [k, v] of [['ssl', 'on'], ['ssl_cert_file', "'server.crt'"], ['ssl_key_file', "'server.key'"], ['ssl_ca_file', "'ca.crt'"]]) await sql(`ALTER SYSTEM SET ${k} = ${v}`);
    await sql(`CREATE ROLE certuser LOGIN; CREATE ROLE sslonly LOGIN; CREATE ROLE pwuser LOGIN PASSWORD '${DB_PASSWORD}'`);
    restart();
  } catch (e) {
    destroyCluster(cluster);
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    cluster, port: l.port, dir,
    ca: path.join(dir, 'ca.crt'), otherCa: path.join(dir, 'other-ca.crt'),
    clientCert: path.join(dir, 'client.crt'), clientKey: path.join(dir, 'client.key'), clientKeyEncrypted: path.join(dir, 'client-enc.key'),
    sql,
    setSsl: async (on) => {
      await sql(`ALTER SYSTEM SET ssl = ${on ? 'on' : 'off'}`);
      restart();
    },
    destroy: () => {
      destroyCluster(cluster);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
