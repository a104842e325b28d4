import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, fsyncDir, mkdirPrivate, readPrivateSmall, replaceAtomically } from '../durable/durableFile.js';
import { errnoOf } from '../durable/errors.js';
import type { FsLayer } from '../durable/fsLayer.js';
import type { ToolSeqIssuer } from '../domain/runtimeCounters.js';

/**
 * Where a session's tool scratch directories live: always on this machine's disk (the file store's
 * layout, or for a PostgreSQL store the workspace's `.session-sidecar/scratch`).
 */
export interface ScratchDirs {
  scratchDir(sessionId: string): string;
}

export type KeepScratch = 'always' | 'onFailure' | 'never';

const TOOL_DIR = /^tool-(\d{6,16})$/;

/**
 * Beside the tool directories: the highest toolSeq handed out, written (durably) by a close that
 * removes scratch directories — once a directory is gone, only this keeps its toolSeq from being
 * handed out again by the next writer.
 */
export const ISSUED_FILE = 'issued.json';

export function scratchName(toolSeq: number): string {
  return `tool-${String(toolSeq).padStart(6, '0')}`;
}

/**
 * The tool runs of a session open for writing in this process: which toolSeqs were handed out
 * (so none is handed out twice, including past directories a crashed run left behind), which
 * scratch directories this process created, and what session/close does with them.
 */
export class ToolRuns implements ToolSeqIssuer {
  issued: number;
  readonly reserved = new Set<number>();
  private readonly scratch = new Map<number, { dir: string; keep: KeepScratch; finished?: boolean; failed?: boolean }>();

  constructor(
    private readonly fsl: FsLayer,
    private readonly layout: ScratchDirs,
    private readonly sessionId: string,
    committedToolSeq: number,
    private readonly sessionKeep: KeepScratch = 'never',
  ) {
    this.issued = Math.max(committedToolSeq, this.highestScratchDir());
  }

  private highestScratchDir(): number {
    const dir = this.layout.scratchDir(this.sessionId);
    if (!this.fsl.lstatSync(dir)?.isDirectory()) return 0;
    const highest = this.fsl.readdirSync(dir).reduce((max, name) => Math.max(max, Number(TOOL_DIR.exec(name)?.[1] ?? 0)), 0);
    return Math.max(highest, issuedOf(readPrivateSmall(this.fsl, path.join(dir, ISSUED_FILE), 256)));
  }

  /**
   * A fresh private directory for the next toolSeq. Its name is made durable (directory fsync)
   * before the toolSeq is handed out, so a restarted sidecar never hands it out again.
   */
  allocate(committedToolSeq: number, keep?: KeepScratch): { toolSeq: number; dir: string; tmpDir: string } {
    const parent = this.layout.scratchDir(this.sessionId);
    ensurePrivateDir(this.fsl, parent);
    let toolSeq = Math.max(this.issued, committedToolSeq) + 1;
    for (;;) {
      const dir = path.join(parent, scratchName(toolSeq));
      try {
        mkdirPrivate(this.fsl, dir); // 0700 from mkdir itself, checked at once, never chmodded
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST') throw err;
        toolSeq += 1; // left by a run this process does not know of (or planted): never reused, never entered
        continue;
      }
      const tmpDir = path.join(dir, 'tmp');
      mkdirPrivate(this.fsl, tmpDir); // in a directory created just now, only the owner can write
      fsyncDir(this.fsl, dir);
      fsyncDir(this.fsl, parent);
      this.issued = toolSeq;
      this.reserved.add(toolSeq);
      this.scratch.set(toolSeq, { dir, keep: keep ?? this.sessionKeep });
      return { toolSeq, dir, tmpDir };
    }
  }

  /** After a commit: its toolFinish records decide what onFailure keeps. */
  noteCommitted(records: ReadonlyArray<Record<string, unknown>>): void {
    for (const r of records) {
      const run = r.kind === 'toolFinish' ? this.scratch.get(r.toolSeq as number) : undefined;
      if (run) Object.assign(run, { finished: true, failed: r.success !== true });
    }
  }

  /** At session/close: removes the scratch directories their policy does not keep. */
  async cleanup(): Promise<void> {
    const doomed = [...this.scratch.values()].filter((run) => !keeps(run));
    this.scratch.clear();
    if (doomed.length === 0) return;
    try {
      // The toolSeqs stay handed out after their directories go: recorded first (temp file,
      // fsync, rename, directory fsync), so a crash during the removals loses nothing of it.
      await replaceAtomically(this.fsl, path.join(this.layout.scratchDir(this.sessionId), ISSUED_FILE), JSON.stringify({ issued: this.issued }), true);
    } catch {
      return; // not recorded: the directories stay, and keep their toolSeqs reserved
    }
    await Promise.allSettled(doomed.map((run) => fs.promises.rm(run.dir, { recursive: true, force: true })));
  }
}

function keeps(run: { keep: KeepScratch; finished?: boolean; failed?: boolean }): boolean {
  if (run.keep === 'always') return true;
  if (run.keep === 'never') return false;
  return run.failed === true || run.finished !== true; // a run that never finished counts as failed
}

function issuedOf(text: string | undefined): number {
  if (text === undefined) return 0;
  try {
    const n = (JSON.parse(text) as { issued?: unknown }).issued;
    return Number.isSafeInteger(n) && (n as number) > 0 ? (n as number) : 0;
  } catch {
    return 0; // damaged: the directories and the journal's counters still bound it from below
  }
}
