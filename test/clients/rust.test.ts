import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { explain, run } from '../pythonRun.js';

/**
 * The Rust client crate (clients/rust/): its `cargo test` (unit tests, the codegen drift test,
 * the integration tests against the BUILT sidecar in both framings, the tokio client, doctests)
 * and `cargo clippy --all-targets -- -D warnings`. Skipped with a printed reason when cargo is
 * missing, except under CI=true, where a missing cargo (or clippy) fails. A cold build takes
 * about 35 s on a 2-core machine (downloads included), a warm run about 6 s: hence the timeout.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MANIFEST = path.join(ROOT, 'clients/rust/Cargo.toml');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const CI = process.env.CI === 'true';
const TIMEOUT = 10 * 60_000;

const works = (args: string[]) => {
  const r = spawnSync('cargo', args, { encoding: 'utf8' });
  return !r.error && r.status === 0;
};
const hasCargo = works(['--version']);
const hasClippy = hasCargo && works(['clippy', '--version']);
const skip = !hasCargo && !CI;
if (skip) console.warn('skipping test/clients/rust.test.ts: cargo is not on PATH');
else if (!hasClippy && !CI) console.warn('skipping the clippy check of test/clients/rust.test.ts: cargo clippy is not installed');

const env = { SESSION_SIDECAR_COMMAND: `node ${JSON.stringify(CLI)}`, CARGO_TERM_COLOR: 'never' };

describe('clients/rust', () => {
  it('cargo and clippy are installed under CI, and the sidecar is built', () => {
    if (CI) {
      expect(hasCargo, 'CI=true: cargo must be installed (.ci/run installs cargo-web)').toBe(true);
      expect(hasClippy, 'CI=true: cargo clippy must be installed (.ci/run installs rust-web-clippy)').toBe(true);
    }
    expect(fs.existsSync(CLI), 'run `npm run build` first').toBe(true);
  });

  it.skipIf(skip)('cargo test passes against the built sidecar', async () => {
    const r = await run('cargo', ['test', '--manifest-path', MANIFEST], { cwd: ROOT, env });
    expect(r.code, explain(r)).toBe(0);
    const passed = [...r.stdout.matchAll(/^test result: ok\. (\d+) passed; 0 failed/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(passed, explain(r)).toBeGreaterThanOrEqual(30);
    for (const name of [
      'methods::every_method_in_both_framings',
      'crash::sigkill_mid_pipeline_keeps_every_acknowledged_record',
      'two_clients::second_client_gets_session_locked_then_reads_and_follows',
      'notifications::a_full_buffer_reports_lagged_and_resubscribing_recovers_everything',
      'codegen::generated_rs_is_what_the_generator_writes',
      'async_client::async_client_in_both_framings',
    ]) {
      expect(r.stdout, explain(r)).toMatch(new RegExp(`^test ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\.\\.\\. ok$`, 'm'));
    }
  }, TIMEOUT);

  it.skipIf(skip || (!hasClippy && !CI))('cargo clippy --all-targets -- -D warnings is clean', async () => {
    const r = await run('cargo', ['clippy', '--manifest-path', MANIFEST, '--all-targets', '--', '-D', 'warnings'], { cwd: ROOT, env });
    expect(r.code, explain(r)).toBe(0);
  }, TIMEOUT);
});
