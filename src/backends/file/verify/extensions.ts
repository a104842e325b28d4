import { blobsCheck } from './blobsCheck.js';
import { describe } from './common.js';
import type { RecordSink } from './journalCheck.js';
import type { ExtensionFinding, Finding, SessionReport, VerifyContext, VerifyExtension, VerifyExtensionRun } from './report.js';

/**
 * EXTENSION POINT. Checks added to every verification: checks that need every record (blob
 * references, say) or that run once over the whole store after the sessions. Add one as
 * `VERIFY_EXTENSIONS.push(check)` from its module, or list it here.
 */
export const VERIFY_EXTENSIONS: VerifyExtension[] = [blobsCheck];

/** One extension during one verification. */
interface Running {
  name: string;
  run: VerifyExtensionRun;
  /** Why it failed (its onRecord or start threw): reported at the end, in place of its findings. */
  failure?: unknown;
}

export function startExtensions(extensions: readonly VerifyExtension[]): Running[] {
  return extensions.map((ext) => {
    try {
      return { name: ext.name, run: ext.start ? ext.start() : ext };
    } catch (err) {
      return { name: ext.name, run: {}, failure: err };
    }
  });
}

/** Hands each committed record to every extension still running. */
export function recordSink(running: readonly Running[]): RecordSink {
  return (sessionId, record, file) => {
    for (const r of running) {
      if (r.failure !== undefined || !r.run.onRecord) continue;
      try {
        r.run.onRecord(sessionId, record, file);
      } catch (err) {
        r.failure = err;
      }
    }
  };
}

/**
 * Runs each extension's `finish`; findings about a session go to its report (which then fails
 * on an error), the others to `store`. A failing extension is an error finding, not a crash.
 */
export async function finishExtensions(running: readonly Running[], ctx: VerifyContext, store: Finding[], sessions: SessionReport[]): Promise<void> {
  for (const r of running) {
    let findings: ExtensionFinding[] = [];
    try {
      if (r.failure !== undefined) throw r.failure;
      findings = r.run.finish ? await r.run.finish(ctx) : [];
    } catch (err) {
      store.push({ severity: 'error', check: r.name, message: `the ${r.name} check failed: ${describe(err)}` });
      continue;
    }
    for (const f of findings) route(f, store, sessions);
  }
}

function route(f: ExtensionFinding, store: Finding[], sessions: SessionReport[]): void {
  const { sessionId, location, ...finding } = f;
  const session = sessionId === undefined ? undefined : sessions.find((s) => s.sessionId === sessionId && s.location === (location ?? 'live'));
  if (!session) {
    store.push(finding);
    return;
  }
  session.findings.push(finding);
  if (finding.severity === 'error') session.ok = false;
}
