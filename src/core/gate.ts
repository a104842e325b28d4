/**
 * The ONE final secret gate of the core: every value the core hands to a backend — record
 * texts, the header, checkpoints, fork copies, every snapshot member (summaries included),
 * state values and their keys, blobs — passes here, after every transformation (redaction,
 * re-serialization, counters placed, turnId tagged, summarizing), right before the port call.
 * The exact UTF-8 bytes the backend will store are checked for every secret registered in
 * this process, in every encoding the detector knows.
 *
 * Unforgeable by type: the port's write methods take `Gated<T>` only, and `Gated` values are
 * made here and nowhere else (`[gated]` is a symbol this module does not export; the static
 * test test/architecture/imports.test.ts fails on any other module that writes `as Gated`).
 * A backend therefore cannot be handed an ungated byte, and a new write path cannot forget
 * the gate: it does not compile without it.
 *
 * Backends may keep a second net of their own (the file store's FsLayer gate, PostgreSQL's
 * PgConnections.guardParams); this one is the rule, those are the safety net.
 */
import { StoreError } from '../domain/errors.js';
import type { SecretSet } from '../domain/secrets/knownSecrets.js';
import type { SealedHeader, SealedRecord, Snapshot, StateEntry } from './port.js';

declare const gated: unique symbol;

/** A value that passed the final gate, unchanged since. Made only by this module. */
export type Gated<T> = T & { readonly [gated]: true };

function passed<T>(value: T): Gated<T> {
  return value as Gated<T>;
}

/** The refusal of a value that reached the final gate holding a secret (nothing of it is written). */
function reached(rule: string, path: string): StoreError {
  return new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, { path, rule });
}

export class FinalGate {
  constructor(private readonly secrets: SecretSet) {}

  /**
   * The rule a registered secret matches in `text`'s UTF-8 bytes, if any (findInText finds
   * exactly that, and vouches for a text it found clean: the walk already checked most texts).
   */
  private find(text: string): string | undefined {
    return this.secrets.size === 0 ? undefined : this.secrets.findInText(text);
  }

  /** The first rule any of `texts` matches (each checked alone: splits across records are the plan's carry-over, domain/secrets/carryOver.ts). */
  private findAny(texts: readonly string[]): string | undefined {
    for (const t of texts) {
      const rule = this.find(t);
      if (rule !== undefined) return rule;
    }
    return undefined;
  }

  /**
   * One request's laid-out texts sealed as records `firstSeq`.. at `ts`, or the rule that stops
   * the whole request (the commit queue refuses it alone: finalGateError).
   */
  records(texts: readonly string[], kinds: readonly string[], firstSeq: number, ts: string): { sealed: Array<Gated<SealedRecord>> } | { rule: string } {
    const rule = this.findAny(texts);
    if (rule !== undefined) return { rule };
    return { sealed: texts.map((text, i) => passed({ seq: firstSeq + i, ts, kind: kinds[i] as string, text })) };
  }

  /** A compaction's checkpoint record. */
  checkpoint(record: SealedRecord): Gated<SealedRecord> {
    const rule = this.find(record.text);
    if (rule !== undefined) throw reached(rule, '(checkpoint)');
    return passed(record);
  }

  /** The records a fork copies into its new session, as stored in the parent. */
  copies(records: readonly SealedRecord[]): Array<Gated<SealedRecord>> {
    const rule = this.findAny(records.map((r) => r.text));
    if (rule !== undefined) {
      throw new StoreError('SecretRejected', `the records to fork hold a registered secret (rule: ${rule}); nothing was written`, { path: 'records', rule });
    }
    return records.map(passed);
  }

  /** A new session's header as it will be stored: its size, and no registered secret in any form. */
  header(header: SealedHeader, maxBytes: number): Gated<SealedHeader> {
    if (Buffer.byteLength(header.text, 'utf8') > maxBytes) throw new StoreError('PayloadTooLarge', `session header is larger than ${maxBytes} bytes`);
    if (this.find(header.text) !== undefined) {
      throw new StoreError('SecretRejected', 'the session header contains a registered secret; nothing was written', { path: 'header', rule: 'raw' });
    }
    return passed(header);
  }

  /**
   * Whether a derived summary ("role: text" of a message) may be stored. Summaries join content
   * parts and fold whitespace, so they can put together a secret no record holds as such: one
   * that does is left out (the session keeps none for it), never stored, never refused.
   */
  admitsSummary(text: string): boolean {
    return this.find(text) === undefined;
  }

  /** Every member of a snapshot: summaries holding a secret are left out, any other member refuses the write. */
  snapshot(s: Snapshot): Gated<Snapshot> {
    const out: Snapshot = { ...s };
    for (const key of ['firstMessage', 'lastMessage'] as const) {
      const text = out[key];
      if (text !== null && !this.admitsSummary(text)) out[key] = null;
    }
    for (const key of ['turn', 'runtime', 'usage', 'header'] as const) {
      const text = out[key];
      const rule = text === null ? undefined : this.find(text);
      if (rule !== undefined) throw reached(rule, '(snapshot)');
    }
    return passed(out);
  }

  /** A state value with its key, as stored. */
  stateEntry(entry: StateEntry): Gated<StateEntry> {
    const rule = this.find(entry.key) ?? this.find(entry.text);
    if (rule !== undefined) throw reached(rule, 'value');
    return passed(entry);
  }

  /**
   * blob for bytes of any size without holding the event loop (SecretSet.findInBytesSliced):
   * bytes found clean are vouched for, so a backend's second net over the same buffer is a lookup.
   */
  async blobSliced(bytes: Buffer): Promise<Gated<Buffer>> {
    const rule = this.secrets.size === 0 ? undefined : await this.secrets.findInBytesSliced(bytes);
    if (rule !== undefined) throw reached(rule, '(blob)');
    return passed(bytes);
  }

  /** A blob's bytes, before any of them leaves for the backend. */
  blob(bytes: Buffer): Gated<Buffer> {
    const rule = this.secrets.size === 0 ? undefined : this.secrets.findInBytes(bytes);
    if (rule !== undefined) throw reached(rule, '(blob)');
    return passed(bytes);
  }
}
