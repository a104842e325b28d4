/**
 * A PostgreSQL server for the tests.
 *
 * 1. `SESSION_SIDECAR_TEST_PG` (a URL) when set: used as is; tests that stop the server skip.
 * 2. Otherwise a throwaway cluster: initdb + pg_ctl from /usr/lib/postgresql/<v>/bin (or
 *    `SESSION_SIDECAR_PG_BIN`), run as the `postgres` user when we are root (initdb refuses
 *    root), in a temporary directory, listening on a unix socket in a directory that user owns
 *    and on 127.0.0.1:<free port>, with fsync=on and synchronous_commit=on. Trust auth: the
 *    cluster is private to this machine's test run.
 *    One shared cluster per vitest run: test/pg/globalSetup.ts provides a run directory; the
 *    first test file that needs the cluster starts it under a lock in that directory, later
 *    files reuse it, and the global teardown stops it. Without the global setup (a file run by
 *    another config) a file starts its own cluster and stops it in afterAll.
 * 3. No PostgreSQL: `pgAvailability()` says why; tests skip with that reason printed — but
 *    under CI=true it throws instead, so CI can never pass by skipping.
 *
 * Each test takes its own schema (`freshSchema`), so tests share the cluster.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    pgRunDir: string;
  }
}

export interface PgCluster {
  /** The URL tests connect with (unix socket unless external). */
  url: string;
  /** TCP URL (127.0.0.1) of a throwaway cluster. */
  tcpUrl?: string;
  /** Present for a throwaway cluster this run controls (stop/start for crash tests). */
  local?: { binDir: string; dataDir: string; socketDir: string; port: number; baseDir: string; listen?: string[] };
}

/** A private cluster reachable from more addresses (the fleet test's network namespaces). */
export interface ClusterNetwork {
  /** Addresses to listen on besides 127.0.0.1 (must exist on this host when the server starts). */
  listen: string[];
  /** Client networks (CIDR) allowed in with trust auth over TCP, e.g. 10.200.7.0/30. */
  trustNetworks: string[];
}

function findBinDir(): string | undefined {
  const explicit = process.env.SESSION_SIDECAR_PG_BIN;
  if (explicit) return fs.existsSync(path.join(explicit, 'initdb')) ? explicit : undefined;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of ['15', ...versions]) {
    const dir = path.join(root, v, 'bin');
    if (fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

/** null when a server can be had; otherwise why not. Throws under CI=true instead of skipping. */
export function pgAvailability(): string | null {
  let reason: string | null = null;
  if (!process.env.SESSION_SIDECAR_TEST_PG) {
    if (!findBinDir()) reason = 'no PostgreSQL found (set SESSION_SIDECAR_TEST_PG to a URL, or install PostgreSQL 15: /usr/lib/postgresql/15/bin)';
    else if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) reason = 'running as root but there is no postgres user to run initdb as';
  }
  if (reason && process.env.CI === 'true') throw new Error(`PostgreSQL tests cannot be skipped under CI=true: ${reason}`);
  if (reason) console.warn(`[skip] PostgreSQL tests skipped: ${reason}`);
  return reason;
}

const asRoot = () => process.getuid?.() === 0;

/**
 * Where clusters live. As root the cluster runs as `postgres`, which must be able to traverse
 * every parent: os.tmpdir() may be private (TMPDIR under /root), /tmp is not.
 */
export function clusterTmpRoot(): string {
  return process.env.SESSION_SIDECAR_PG_TMP ?? (asRoot() ? '/tmp' : os.tmpdir());
}

function runAsOwner(cmd: string, args: string[]): string {
  const [file, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** initdb + start a new cluster under baseDir (created, and owned by postgres when root). */
export async function startThrowawayCluster(baseDir?: string, network?: ClusterNetwork): Promise<PgCluster> {
  const binDir = findBinDir();
  if (!binDir) throw new Error('no PostgreSQL binaries');
  const base = baseDir ?? fs.mkdtempSync(path.join(clusterTmpRoot(), 'ss-pg-'));
  fs.mkdirSync(base, { recursive: true });
  const dataDir = path.join(base, 'data');
  const socketDir = path.join(base, 'sock');
  fs.mkdirSync(socketDir, { recursive: true });
  if (asRoot()) execFileSync('chown', ['-R', 'postgres:', base]);
  fs.chmodSync(base, 0o755);
  runAsOwner(path.join(binDir, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync']);
  if (network) {
    // Only the given private networks get in (trust, like the loopback lines initdb wrote).
    const lines = network.trustNetworks.map((n) => `host all all ${n} trust\n`).join('');
    fs.appendFileSync(path.join(dataDir, 'pg_hba.conf'), lines);
  }
  const port = await freePort();
  const cluster: PgCluster = {
    url: `postgres://postgres@/postgres?host=${socketDir}&port=${port}`,
    tcpUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    local: { binDir, dataDir, socketDir, port, baseDir: base, ...(network ? { listen: network.listen } : {}) },
  };
  startCluster(cluster);
  return cluster;
}

export function startCluster(c: PgCluster): void {
  const l = c.local!;
  runAsOwner(path.join(l.binDir, 'pg_ctl'), ['-D', l.dataDir, '-l', path.join(l.baseDir, 'server.log'), '-w', '-t', '60', '-o', serverOptions(l), 'start']);
}

function serverOptions(l: NonNullable<PgCluster['local']>): string {
  return [
    `-p ${l.port}`, `-c listen_addresses=${['127.0.0.1', ...(l.listen ?? [])].join(',')}`, `-c unix_socket_directories=${l.socketDir}`,
    '-c fsync=on', '-c synchronous_commit=on', '-c max_connections=200', '-c shared_buffers=32MB',
    // Lock waits over deadlock_timeout (1 s) go to server.log: the fleet bench counts notification-lock waits there.
    '-c log_lock_waits=on',
  ].join(' ');
}

/** `pg_ctl stop -m <mode>`; `immediate` is a crash: no checkpoint, recovery on next start. */
export function stopCluster(c: PgCluster, mode: 'fast' | 'immediate' = 'fast'): void {
  const l = c.local!;
  runAsOwner(path.join(l.binDir, 'pg_ctl'), ['-D', l.dataDir, '-m', mode, '-w', 'stop']);
}

function runAsOwnerAsync(cmd: string, args: string[]): Promise<unknown> {
  const [file, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return promisify(execFile)(file, argv, { encoding: 'utf8' });
}

/** Like stopCluster/startCluster, without blocking this process's event loop meanwhile. */
export async function stopClusterAsync(c: PgCluster, mode: 'fast' | 'immediate'): Promise<void> {
  const l = c.local!;
  await runAsOwnerAsync(path.join(l.binDir, 'pg_ctl'), ['-D', l.dataDir, '-m', mode, '-w', 'stop']);
}

export async function startClusterAsync(c: PgCluster): Promise<void> {
  const l = c.local!;
  await runAsOwnerAsync(path.join(l.binDir, 'pg_ctl'), ['-D', l.dataDir, '-l', path.join(l.baseDir, 'server.log'), '-w', '-t', '60', '-o', serverOptions(l), 'start']);
}

export function destroyCluster(c: PgCluster): void {
  try {
    stopCluster(c, 'immediate');
  } catch {
    /* already stopped */
  }
  fs.rmSync(c.local!.baseDir, { recursive: true, force: true });
}

let mine: PgCluster | undefined;

/** The shared cluster of this vitest run (see the header), or the external one. */
export async function sharedCluster(): Promise<PgCluster> {
  const external = process.env.SESSION_SIDECAR_TEST_PG;
  if (external) return { url: external };
  let runDir: string | undefined;
  try {
    runDir = inject('pgRunDir');
  } catch {
    runDir = undefined;
  }
  if (!runDir) {
    mine ??= await startThrowawayCluster();
    return mine;
  }
  const info = path.join(runDir, 'cluster.json');
  const lock = path.join(runDir, 'lock');
  for (;;) {
    if (fs.existsSync(info)) return JSON.parse(fs.readFileSync(info, 'utf8')) as PgCluster;
    try {
      fs.mkdirSync(lock); // the lock: only one file starts the cluster
    } catch {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      if (!fs.existsSync(info)) {
        const c = await startThrowawayCluster(path.join(runDir, 'cluster'));
        fs.writeFileSync(info + '.tmp', JSON.stringify(c));
        fs.renameSync(info + '.tmp', info);
      }
    } finally {
      fs.rmdirSync(lock);
    }
  }
}

/** Stops the per-file cluster a file started without the global setup (call in afterAll). */
export function releaseSharedCluster(): void {
  if (mine) destroyCluster(mine);
  mine = undefined;
}

let schemaCounter = 0;
/** A schema name no other test uses. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${schemaCounter++}`.toLowerCase();
}
