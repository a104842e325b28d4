import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { explain, hasPython311, run } from '../pythonRun.js';
import { pythonVenv, type Venv } from '../pythonVenv.js';

/**
 * clients/python with the REAL OpenAI Agents SDK from PyPI, in a cached venv (test/pythonVenv.ts):
 * the package's whole test suite under pytest — tests/test_agents_sdk.py included, required to
 * run (SIDECAR_REQUIRE_AGENTS=1): Runner.run with a Model of our own, resumed across a SIGKILL
 * of the sidecar — against the BUILT sidecar; `mypy --strict` on src/session_sidecar; and
 * mypy's check that SidecarSession is the SDK's `Session` (tests/typecheck). Under CI=true a venv
 * that cannot be made fails; otherwise these are skipped with the reason printed.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLIENT = path.join(ROOT, 'clients/python');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const CI = process.env.CI === 'true';
/** Pinned: the SDK version SidecarSession was validated against, and the test tools. */
export const AGENTS_REQUIREMENTS = ['openai-agents==0.24.0', 'pytest==9.2.0', 'mypy==2.4.1'] as const;

let venv: Venv | undefined;
let why = '';

beforeAll(async () => {
  if (!hasPython311()) {
    why = 'python3 (>= 3.11) is not on PATH';
    return;
  }
  try {
    venv = await pythonVenv('agents', AGENTS_REQUIREMENTS);
  } catch (err) {
    why = `the venv with ${AGENTS_REQUIREMENTS.join(', ')} could not be made: ${(err as Error).message}`;
  }
  if (!venv && !CI) console.warn(`skipping test/clients/pythonAgents.test.ts: ${why}`);
}, 20 * 60_000);

const env = () => ({
  PYTHONPATH: path.join(CLIENT, 'src'), SESSION_SIDECAR_COMMAND: `node ${JSON.stringify(CLI)}`,
  SIDECAR_REQUIRE_AGENTS: '1', OPENAI_AGENTS_DISABLE_TRACING: '1',
});

describe('clients/python with openai-agents', () => {
  it('has the venv under CI, and the built sidecar', () => {
    if (CI) expect(venv, `CI=true: ${why}`).toBeDefined();
    expect(fs.existsSync(CLI), 'run `npm run build` first').toBe(true);
  });

  it('pytest: the whole suite, the real-SDK tests included, passes against the built sidecar', async (ctx) => {
    if (!venv) return ctx.skip();
    const r = await run(venv.python, ['-m', 'pytest', '-p', 'no:cacheprovider', '-rs', '-v', 'tests'], { cwd: CLIENT, env: env() });
    expect(r.code, explain(r)).toBe(0);
    for (const name of ['test_runner_resumes_across_a_sigkill_of_the_sidecar', 'test_it_is_an_agents_sdk_session',
      'test_same_behaviour_as_the_sdks_sqlite_session', 'test_session_settings_limit_bounds_what_the_model_sees',
      'test_a_caller_chosen_id_is_found_or_created', 'test_every_public_method_of_sidecar_is_on_async_sidecar_with_the_same_parameters']) {
      expect(r.stdout, explain(r)).toMatch(new RegExp(`${name}\\S* PASSED`));
    }
    const summary = /(\d+) passed/.exec(r.stdout);
    expect(Number(summary?.[1]), explain(r)).toBeGreaterThanOrEqual(50);
    for (const line of r.stdout.split('\n').filter((l) => l.startsWith('SKIPPED'))) console.warn(`clients/python (pytest): ${line.trim()}`);
  }, 10 * 60_000);

  it('mypy --strict is clean on src/session_sidecar, and SidecarSession type-checks as the SDK Session', async (ctx) => {
    if (!venv) return ctx.skip();
    const hasMypy = await run(venv.python, ['-c', 'import mypy'], { cwd: CLIENT });
    if (hasMypy.code !== 0) return ctx.skip();
    const cache = path.join(venv.dir, '.mypy_cache_session_sidecar');
    // session_sidecar/langgraph.py needs langgraph, which this venv does not have: pythonLanggraph.test.ts checks it in its own
    const src = await run(venv.python, ['-m', 'mypy', '--strict', '--cache-dir', cache, '--exclude', 'langgraph\\.py$', 'src/session_sidecar'], { cwd: CLIENT });
    expect(src.code, explain(src)).toBe(0);
    expect(src.stdout).toMatch(/^Success: no issues found/m);
    const proto = await run(venv.python, ['-m', 'mypy', '--strict', '--cache-dir', cache, 'tests/typecheck/agents_session_protocol.py'], {
      cwd: CLIENT, env: { MYPYPATH: path.join(CLIENT, 'src') },
    });
    expect(proto.code, explain(proto)).toBe(0);
  }, 10 * 60_000);
});
