/**
 * PgBouncer (Debian's `pgbouncer` package) in front of a test cluster, in transaction pooling
 * mode: the proxy a fleet's DBA puts between many sidecars and PostgreSQL. Run as the
 * `postgres` user when we are root (pgbouncer refuses root), listening on 127.0.0.1:<free
 * port>, trust auth (the cluster behind it is trust too), a small server pool so that clients
 * really share server connections. Under CI=true a missing binary fails instead of skipping.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { clusterTmpRoot, freePort, type PgCluster } from './pgServer.js';

export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p));

/** null when PgBouncer can run here; otherwise why not (throws under CI=true). */
export function pgbouncerAvailability(cluster: PgCluster | undefined): string | null {
  let reason: string | null = null;
  if (!PGBOUNCER) reason = 'no pgbouncer binary (apt-get install pgbouncer)';
  else if (cluster && !cluster.local) reason = 'the test cluster is external (SESSION_SIDECAR_TEST_PG): PgBouncer tests need a local one';
  if (reason && process.env.CI === 'true' && !PGBOUNCER) throw new Error(`PgBouncer tests cannot be skipped under CI=true: ${reason}`);
  if (reason) console.warn(`[skip] PgBouncer tests skipped: ${reason}`);
  return reason;
}

export interface Bouncer {
  /** postgres://postgres@127.0.0.1:<port>/postgres through the proxy. */
  url: string;
  stop(): Promise<void>;
}

export async function startPgBouncer(cluster: PgCluster, poolSize = 3): Promise<Bouncer> {
  const l = cluster.local!;
  const dir = fs.mkdtempSync(path.join(clusterTmpRoot(), 'ss-bouncer-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'users.txt'), '"postgres" ""\n');
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${l.socketDir} port=${l.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 500',
    `logfile = ${path.join(dir, 'pgbouncer.log')}`,
    `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
    '',
  ].join('\n'));
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:', dir]);
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', PGBOUNCER!, path.join(dir, 'pgbouncer.ini')]] : [PGBOUNCER!, [path.join(dir, 'pgbouncer.ini')]];
  const child: ChildProcess = spawn(file, argv, { stdio: 'ignore' });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`pgbouncer did not start: ${fs.existsSync(path.join(dir, 'pgbouncer.log')) ? fs.readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8').slice(-800) : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
