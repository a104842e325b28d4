import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { normalize, normalizeActual } from './exampleNormalize.js';
import { contextPrune, corrupt, internal, lifecycle, management, quickStart, runtime, tooLarge, torn } from './exampleScenarios.js';
import { Steps } from './exampleSteps.js';
import { story } from './exampleStory.js';
import { usageRewind } from './exampleUsageRewind.js';
import { isServerOutput, readBlocks } from './readmeBlocks.js';

/**
 * Every example of server output in the READMEs is what the BUILT server sends for the request
 * shown next to it: each is marked `<!-- server-output: STEP -->`, the scenarios run every step
 * against the binary over pipes, and the README block must equal the server's frame member for
 * member, in the same order, once generated ids, times, version, store root, internal-error
 * references and evidence file names are normalized. An unmarked block that looks like server
 * output fails, unless marked `<!-- illustrative: why -->`.
 * Needs `npx tsc -p . && chmod +x dist/src/cli.js`.
 */
const ROOT = path.resolve(__dirname, '../..');
const SPEC = path.join(ROOT, 'protocol/README.md');
const FILES = [SPEC, path.join(ROOT, 'README.md')];
const blocks = readBlocks(SPEC);
const steps = new Steps(blocks);

describe('examples of server output in the READMEs', () => {
  beforeAll(async () => {
    // independent stores: the scenarios may run side by side
    await Promise.all([story, lifecycle, torn, corrupt, internal, runtime, quickStart, tooLarge, management, usageRewind, contextPrune].map((s) => s(steps, tempDir('sidecar-examples-'))));
  }, 60_000);

  it('are all marked: server-output (reproduced here) or illustrative (with a reason)', () => {
    const all = FILES.flatMap(readBlocks);
    const unmarked = all.filter((b) => !b.marker && b.messages.some((m) => isServerOutput(m.value)))
      .map((b) => `${path.relative(ROOT, b.file)}:${b.line}`);
    expect(unmarked).toEqual([]);
    const marked = all.filter((b) => b.marker?.kind === 'server-output');
    expect(marked.filter((b) => b.file !== SPEC || !b.messages.some((m) => isServerOutput(m.value))).map((b) => `${b.file}:${b.line}`)).toEqual([]);
    expect(marked.length).toBeGreaterThan(40);
    const names = marked.map((b) => b.marker!.arg);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('are what the built server sends for the requests shown', () => {
    const problems: string[] = [];
    for (const b of blocks.filter((x) => x.marker?.kind === 'server-output')) {
      const name = b.marker!.arg;
      const actual = steps.outputs.get(name);
      if (!actual) {
        problems.push(`line ${b.line}: no scenario runs step ${name}`);
        continue;
      }
      const shown = b.messages.filter((m) => isServerOutput(m.value));
      if (shown.length !== actual.length) problems.push(`line ${b.line} (${name}): shows ${shown.length} messages, the server sent ${actual.length}`);
      shown.forEach((m, i) => {
        const want = JSON.stringify(normalizeActual(actual[i], steps.ids));
        const got = JSON.stringify(normalize(m.value));
        if (got !== want) problems.push(`line ${b.line} (${name}):\n  README: ${got}\n  server: ${want}`);
        if (m.contentLength !== undefined && m.contentLength !== Buffer.byteLength(m.text)) {
          problems.push(`line ${b.line} (${name}): Content-Length ${m.contentLength}, body ${Buffer.byteLength(m.text)} bytes`);
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('every step the scenarios run is an example in the README', () => {
    expect([...steps.outputs.keys()].filter((n) => !steps.marked(n))).toEqual([]);
  });
});
