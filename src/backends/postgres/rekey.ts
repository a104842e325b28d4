/**
 * `session-sidecar rekey --store postgres://...`: re-seals every value of a PostgreSQL store from
 * one key (`from`; absent: a plaintext store) to another (`to`; absent: decrypt). STORAGE.md,
 * "PostgreSQL: encryption at rest", is the reference; the crash reasoning:
 *
 * 1. The marker (encryptionRow.ts) must name `from` (no marker: no `from`), or be an interrupted
 *    rekey with the same two key ids (this run resumes it); one naming `to` already: done.
 * 2. The serving lock is taken exclusively (serveLock.ts) on a connection held to the end: a
 *    sidecar that may write refuses the rekey (SessionLocked storeServed) before anything is
 *    changed, and none starts while it runs.
 * 3. The marker becomes {rekeying, from, to} (one committed UPDATE): from then on every open is
 *    refused (rekeyUnfinished) until a rekey finishes. Then every lease is taken over (token + 1,
 *    released; sessions.writer_token cleared): any fence issued before is LeaseLost.
 * 4. Table by table, in pages of `pageSize` rows in key order, each page ONE transaction: every
 *    value under `from` (or plaintext, when encrypting) is opened and sealed under `to` (or
 *    left plaintext, when decrypting), its crc recomputed over the new stored text; values
 *    already under `to` are skipped. Every value names its key (sealing.ts), so after a crash
 *    at any point each value is whole under exactly one of the two keys, and the repeated
 *    command redoes only what is left. Then the stored sizes (stored_bytes: the stored texts'
 *    bytes) are recomputed from the records (derived: idempotent).
 * 5. The marker names `to` (or is deleted, when decrypting): the store is served again.
 *
 * `work` (domain/work.ts): one phase, "re-sealing" N rows (of sessions, records, state values
 * and blobs, counted at the start), a step per committed page, and `shouldStop` between pages
 * only: a stop there is as a crash after that page's COMMIT (the marker still says rekeying),
 * so the same command finishes it.
 */
import type { StoreKey } from '../../durable/storeKey.js';
import { sameKey } from '../../durable/storeKey.js';
import { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { type Work, WorkInterrupted } from '../../domain/work.js';
import { hasMarkerTable, readEncryptionRow } from './encryptionRow.js';
import { PgBackendError } from './errors.js';
import type { PgConnections, Tx } from './pool.js';
import { blobKeyId, KeyCodec, keyMismatch, textKeyId, type PgCodec, type Where } from './sealing.js';
import { blobAad, recordAad, rowAad, SNAPSHOT_COLUMNS, stateAad } from './sealedValues.js';
import { excludeServers } from './serveLock.js';
import { recordCrc, textCrc } from './types.js';

export interface PgRekeyOptions {
  from?: StoreKey;
  to?: StoreKey;
  /** Rows per transaction (default 500). */
  pageSize?: number;
  /** Test seam: stop (throw) after this many committed pages, as a crash there would. */
  stopAfterPages?: number;
  /** Progress and stopping between pages (a command line's Ctrl-C). */
  work?: Work;
}

export interface PgRekeyReport {
  sessions: number;
  /** Values re-sealed (or decrypted). */
  rewritten: number;
  /** Values found already under the new key (a resumed run). */
  skipped: number;
}

/** Thrown by the stopAfterPages seam. */
export class RekeyStopped extends Error {}

export async function rekeyPgStore(conns: PgConnections, schema: string, o: PgRekeyOptions): Promise<PgRekeyReport> {
  const { from, to } = o;
  if (!from && !to) throw new PgBackendError('InvalidArgument', 'give the current key (--from-env/--from-file), the new key (--to-env/--to-file), or both', { path: 'keys' });
  if (from && to && from.id === to.id) throw new PgBackendError('InvalidArgument', 'the new key is the current key', { path: 'to' });
  if (!(await hasMarkerTable(conns, schema))) {
    throw new PgBackendError('UnsafeStore', 'encryption at rest needs store schema version 8: run \'session-sidecar pg migrate\' as the schema owner', { reason: 'schemaOlder' });
  }
  const lock = await conns.dedicatedClient(() => undefined);
  try {
    await excludeServers(lock, schema);
    const marker = await readEncryptionRow(conns);
    const sessions = Number((await conns.query<{ n: string }>('SELECT count(*) AS n FROM sessions'))[0]!.n);
    if (marker?.rekeying) {
      if (!sameKey(marker.from, from) || !sameKey(marker.to, to)) {
        throw keyMismatch('an interrupted rekey of this store used other keys: run it again with the same --from and --to keys', 'rekeyUnfinished');
      }
    } else if (sameKey(marker?.keyId ?? null, to)) {
      return { sessions, rewritten: 0, skipped: 0 }; // finished already
    } else if (!sameKey(marker?.keyId ?? null, from)) {
      throw keyMismatch(marker ? 'the --from key is not the store\'s key' : 'the store is not encrypted: give no --from key', marker ? 'wrongKey' : 'notEncrypted');
    }
    if (!marker?.rekeying) {
      await conns.query(
        `INSERT INTO store_encryption (key_id, rekeying, rekey_from, rekey_to) VALUES (NULL, true, $1, $2)
         ON CONFLICT (one) DO UPDATE SET key_id = NULL, rekeying = true, rekey_from = $1, rekey_to = $2, updated_at = now()`,
        [from?.id ?? null, to?.id ?? null], 'write');
    }
    // Every writer's fence ends here (a takeover of every lease): a sidecar still writing under
    // the old key without the serving lock (its LISTEN connection lost while this rekey started)
    // is LeaseLost at its next write, never leaves a value under the old key behind a page done.
    await conns.transaction(async (tx) => {
      await tx.query('UPDATE leases SET token = token + 1, released_at = now()');
      await tx.query('UPDATE sessions SET writer_token = NULL WHERE writer_token IS NOT NULL');
    });
    const run = new Rekeying(conns, from, to, o);
    if (o.work?.phase) {
      const rows = await conns.query<{ n: string }>(`SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM records)
                                                      + (SELECT count(*) FROM state_values) + (SELECT count(*) FROM blobs) AS n`);
      o.work.phase('re-sealing', Number(rows[0]!.n), 'rows');
    }
    await run.all();
    if (to) {
      await conns.query('UPDATE store_encryption SET key_id = $1, rekeying = false, rekey_from = NULL, rekey_to = NULL, updated_at = now()', [to.id], 'write');
    } else {
      await conns.query('DELETE FROM store_encryption', [], 'write');
    }
    return { sessions, rewritten: run.rewritten, skipped: run.skipped };
  } finally {
    await lock.end().catch(() => undefined); // the serving lock goes with the connection
  }
}

class Rekeying {
  rewritten = 0;
  skipped = 0;
  private pages = 0;
  private readonly fromCodec: PgCodec | undefined;
  private readonly toCodec: PgCodec | undefined;
  private readonly pageSize: number;

  constructor(private readonly conns: PgConnections, from: StoreKey | undefined, private readonly to: StoreKey | undefined, private readonly o: PgRekeyOptions) {
    // The keys are secrets of this process: no plaintext holding one is ever sealed.
    const secrets = new SecretSet();
    from?.registerWith(secrets);
    to?.registerWith(secrets);
    const net = (plain: string) => secrets.findInBytes(Buffer.from(plain, 'utf8'));
    this.fromCodec = from && new KeyCodec(from, () => net);
    this.toCodec = to && new KeyCodec(to, () => net);
    this.pageSize = o.pageSize ?? 500;
  }

  /** The new stored text of `stored`, or undefined when it is under the new key already. */
  private text(aad: string, stored: string, where: Where): string | undefined {
    const kid = textKeyId(stored);
    let plain: string;
    if (kid === null) {
      if (!this.to) return this.skip();
      if (this.fromCodec) throw new PgBackendError('Corrupt', 'a plaintext value in an encrypted store', { reason: 'sealed', ...where });
      plain = stored;
    } else {
      if (this.to?.names(kid)) return this.skip();
      if (!this.fromCodec) throw keyMismatch('a value of the store is encrypted with another key', 'wrongKey');
      plain = this.fromCodec.openText(aad, stored, where);
    }
    this.rewritten++;
    return this.toCodec ? this.toCodec.sealText(aad, plain) : plain;
  }

  private blob(aad: string, stored: Buffer, where: Where): Buffer | undefined {
    const kid = blobKeyId(stored);
    let plain: Buffer;
    if (kid === null || (!this.fromCodec && !this.to?.names(kid))) {
      // A plaintext blob (when encrypting, any blob not under the new key is plaintext: it may begin with anything).
      if (!this.to) return this.skip();
      if (this.fromCodec) throw new PgBackendError('Corrupt', 'a plaintext blob in an encrypted store', { reason: 'sealed', ...where });
      plain = stored;
    } else {
      if (this.to?.names(kid)) return this.skip();
      plain = this.fromCodec!.openBlob(aad, stored, where);
    }
    this.rewritten++;
    return this.toCodec ? this.toCodec.sealBlob(aad, plain) : plain;
  }

  private skip(): undefined {
    this.skipped++;
    return undefined;
  }

  async all(): Promise<void> {
    await this.sessionRows();
    await this.records();
    await this.states();
    await this.blobs();
    // Stored sizes are the stored texts' bytes: derived from the records, recomputed (idempotent).
    await this.conns.transaction(async (tx) => {
      await tx.query(`UPDATE sessions s SET stored_bytes = COALESCE((SELECT sum(octet_length(text)) FROM records r
                        WHERE r.session_id = s.session_id AND r.generation = s.generation), 0)`);
      await tx.query(`UPDATE archived_generations a SET stored_bytes = COALESCE((SELECT sum(octet_length(text)) FROM records r
                        WHERE r.session_id = a.session_id AND r.generation = a.generation), 0)`);
    });
  }

  /**
   * One page in one transaction (its rows as many as it returns); the seam counts committed
   * pages. After the COMMIT, and only there, the work may stop (a safe point).
   */
  private async page(body: (tx: Tx) => Promise<number>): Promise<number> {
    const rows = await this.conns.transaction(body);
    this.pages++;
    this.o.work?.step?.(rows);
    if (this.o.stopAfterPages !== undefined && this.pages >= this.o.stopAfterPages) throw new RekeyStopped(`stopped after ${this.pages} page(s)`);
    if (await this.o.work?.shouldStop?.()) throw new WorkInterrupted(`${this.rewritten} value(s) rewritten`);
    return rows;
  }

  private async sessionRows(): Promise<void> {
    const cols = ['header_text', ...Object.values(SNAPSHOT_COLUMNS)];
    for (let after = ''; ;) {
      const n = await this.page(async (tx) => {
        const rows = await tx.query<Record<string, string | null>>(
          `SELECT session_id, ${cols.join(', ')} FROM sessions WHERE session_id > $1 ORDER BY session_id LIMIT $2 FOR UPDATE`, [after, this.pageSize]);
        for (const row of rows) {
          const id = row.session_id!;
          const sets: string[] = [];
          const args: unknown[] = [id];
          for (const c of cols) {
            const v = row[c];
            if (v === null || v === undefined) continue;
            const next = this.text(rowAad(id, c), v, { sessionId: id, column: c, seq: 0 });
            if (next === undefined) continue;
            args.push(next);
            sets.push(`${c} = $${args.length}`);
            if (c === 'header_text') {
              args.push(textCrc(id, next));
              sets.push(`header_crc = $${args.length}`);
            }
          }
          if (sets.length > 0) await tx.query(`UPDATE sessions SET ${sets.join(', ')} WHERE session_id = $1`, args);
        }
        if (rows.length > 0) after = rows[rows.length - 1]!.session_id!;
        return rows.length;
      });
      if (n < this.pageSize) return;
    }
  }

  private async records(): Promise<void> {
    let after: [string, number, string] = ['', -1, '0'];
    for (;;) {
      const n = await this.page(async (tx) => {
        const rows = await tx.query<{ session_id: string; generation: number; seq: string; ts: string; kind: string; text: string }>(
          `SELECT session_id, generation, seq, ts, kind, text FROM records WHERE (session_id, generation, seq) > ($1, $2, $3)
            ORDER BY session_id, generation, seq LIMIT $4 FOR UPDATE`, [...after, this.pageSize]);
        const upd = { id: [] as string[], gen: [] as number[], seq: [] as string[], text: [] as string[], crc: [] as string[] };
        for (const r of rows) {
          const seq = Number(r.seq);
          const rec = { seq, ts: r.ts, kind: r.kind };
          const next = this.text(recordAad(r.session_id, rec), r.text, { sessionId: r.session_id, generation: r.generation, seq });
          if (next === undefined) continue;
          upd.id.push(r.session_id); upd.gen.push(r.generation); upd.seq.push(r.seq); upd.text.push(next);
          upd.crc.push(recordCrc(r.session_id, { ...rec, text: next }));
        }
        if (upd.id.length > 0) {
          await tx.query(
            `UPDATE records r SET text = u.text, crc = u.crc
               FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::text[]) AS u(session_id, generation, seq, text, crc)
              WHERE r.session_id = u.session_id AND r.generation = u.generation AND r.seq = u.seq`,
            [upd.id, upd.gen, upd.seq, upd.text, upd.crc]);
        }
        const last = rows[rows.length - 1];
        if (last) after = [last.session_id, last.generation, last.seq];
        return rows.length;
      });
      if (n < this.pageSize) return;
    }
  }

  private async states(): Promise<void> {
    let after: [string, string] = ['', ''];
    for (;;) {
      const n = await this.page(async (tx) => {
        const rows = await tx.query<{ session_id: string; key: string; text: string }>(
          'SELECT session_id, key, text FROM state_values WHERE (session_id, key) > ($1, $2) ORDER BY session_id, key LIMIT $3 FOR UPDATE', [...after, this.pageSize]);
        for (const r of rows) {
          const next = this.text(stateAad(r.session_id, r.key), r.text, { sessionId: r.session_id, key: r.key });
          if (next === undefined) continue;
          await tx.query('UPDATE state_values SET text = $3, crc = $4 WHERE session_id = $1 AND key = $2', [r.session_id, r.key, next, textCrc(`${r.session_id}\n${r.key}`, next)]);
        }
        const last = rows[rows.length - 1];
        if (last) after = [last.session_id, last.key];
        return rows.length;
      });
      if (n < this.pageSize) return;
    }
  }

  private async blobs(): Promise<void> {
    // Blobs may be large: a smaller page.
    const size = Math.max(1, Math.floor(this.pageSize / 10));
    for (let after = ''; ;) {
      const n = await this.page(async (tx) => {
        const rows = await tx.query<{ sha256: string; bytes: Buffer }>('SELECT sha256, bytes FROM blobs WHERE sha256 > $1 ORDER BY sha256 LIMIT $2 FOR UPDATE', [after, size]);
        for (const r of rows) {
          const next = this.blob(blobAad(r.sha256), r.bytes, { sha256: r.sha256 });
          if (next !== undefined) await tx.query('UPDATE blobs SET bytes = $2 WHERE sha256 = $1', [r.sha256, next]);
        }
        const last = rows[rows.length - 1];
        if (last) after = last.sha256;
        return rows.length;
      });
      if (n < size) return;
    }
  }
}
