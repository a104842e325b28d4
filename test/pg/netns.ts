/**
 * "Other machines" for the fleet test: one Linux network namespace per machine, joined to this
 * host by a veth pair on a private /30 (host side 10.200.N.1, machine side 10.200.N.2), plus a
 * UTS namespace per process so each machine has its own host name. A sidecar started in a
 * machine reaches PostgreSQL only over TCP at its own host-side address, and PostgreSQL sees it
 * come from its own client address — as a sidecar on another machine would.
 *
 * Needs root and `ip` (iproute2) and `unshare` (util-linux). `netnsAvailability()` says why
 * not, and the caller falls back (and prints that reason); SESSION_SIDECAR_TEST_NO_NETNS=1
 * forces the fallback (to run it on a machine that has namespaces). Nothing is installed here.
 * Every namespace and link made here is removed by `removeMachines` (a veth pair disappears
 * with its namespace; the host end is deleted explicitly too).
 */
import { execFileSync, spawnSync } from 'node:child_process';

export interface Machine {
  /** The host name its processes see (UTS namespace). */
  hostname: string;
  /** The network namespace. */
  ns: string;
  /** The host-side address (PostgreSQL listens on it). */
  hostAddr: string;
  /** The machine's own address (PostgreSQL sees its connections come from it). */
  addr: string;
  /** The /30 the pair lives on (pg_hba trusts it). */
  network: string;
  hostIf: string;
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** null when namespaces can be made here; otherwise why not (and the fallback is used). */
export function netnsAvailability(): string | null {
  if (process.env.SESSION_SIDECAR_TEST_NO_NETNS) return 'SESSION_SIDECAR_TEST_NO_NETNS is set';
  if (process.getuid?.() !== 0) return 'not root: network namespaces need CAP_NET_ADMIN';
  for (const tool of ['ip', 'unshare']) {
    if (spawnSync(tool, ['-V']).error) return `no \`${tool}\` on this machine (iproute2 / util-linux)`;
  }
  const probe = `ssprobe${process.pid % 100000}`;
  try {
    ip(['netns', 'add', probe]);
    ip(['netns', 'del', probe]);
  } catch {
    return '`ip netns add` failed (no namespace support in this container)';
  }
  if (spawnSync('unshare', ['--uts', 'true']).status !== 0) return '`unshare --uts` failed';
  return null;
}

/** A third octet no address on this host uses yet, for `count` consecutive /30 networks. */
function freeOctet(count: number): number {
  const used = execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' });
  for (let tries = 0; tries < 200; tries++) {
    const base = 1 + Math.floor(Math.random() * (250 - count));
    if (Array.from({ length: count }, (_, i) => `10.200.${base + i}.`).every((p) => !used.includes(p))) return base;
  }
  throw new Error('no free 10.200.x.0/30 network');
}

/** Makes `names.length` machines; on any failure removes what it made and throws. */
export function makeMachines(names: string[]): Machine[] {
  const base = freeOctet(names.length);
  const tag = `${process.pid % 10000}${Math.floor(Math.random() * 100)}`;
  const made: Machine[] = [];
  try {
    names.forEach((hostname, i) => {
      const octet = base + i;
      const m: Machine = {
        hostname, ns: `ssfleet${tag}m${i}`, hostAddr: `10.200.${octet}.1`, addr: `10.200.${octet}.2`,
        network: `10.200.${octet}.0/30`, hostIf: `ssh${tag}m${i}`.slice(0, 15),
      };
      const peer = `ssn${tag}m${i}`.slice(0, 15);
      ip(['netns', 'add', m.ns]);
      made.push(m);
      ip(['link', 'add', m.hostIf, 'type', 'veth', 'peer', 'name', peer]);
      ip(['link', 'set', peer, 'netns', m.ns]);
      ip(['addr', 'add', `${m.hostAddr}/30`, 'dev', m.hostIf]);
      ip(['link', 'set', m.hostIf, 'up']);
      ip(['netns', 'exec', m.ns, 'ip', 'addr', 'add', `${m.addr}/30`, 'dev', peer]);
      ip(['netns', 'exec', m.ns, 'ip', 'link', 'set', peer, 'up']);
      ip(['netns', 'exec', m.ns, 'ip', 'link', 'set', 'lo', 'up']);
    });
  } catch (err) {
    removeMachines(made);
    throw err;
  }
  return made;
}

export function removeMachines(machines: Machine[]): void {
  for (const m of machines) {
    spawnSync('ip', ['link', 'del', m.hostIf], { stdio: 'ignore' });
    spawnSync('ip', ['netns', 'del', m.ns], { stdio: 'ignore' });
  }
}

/**
 * The command line running `argv` on `m`: in its network namespace, in a new UTS namespace
 * named after it. Every step execs (no fork), so the spawned child's pid is the program's pid
 * (SIGKILL / SIGSTOP of the child reach the sidecar itself).
 */
export function onMachine(m: Machine, argv: string[]): { command: string; args: string[] } {
  return {
    command: 'ip',
    args: ['netns', 'exec', m.ns, 'unshare', '--uts', '--', 'sh', '-c', 'hostname "$0" && exec "$@"', m.hostname, ...argv],
  };
}
