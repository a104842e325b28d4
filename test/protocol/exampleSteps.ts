import { expect } from 'vitest';
import type { RawSidecar } from './exampleDriver.js';
import { IdMap } from './exampleNormalize.js';
import { type Block, isServerOutput, type Message, type Value } from './readmeBlocks.js';

/**
 * The scenario side of the README examples: a step sends the request the README shows next to
 * the marked block (the request with the same id, in the block itself or the two before it),
 * in the server's ids, and keeps the server's answer under the step's name. Requests the
 * README gives only in prose are passed by the scenario.
 */
export class Steps {
  readonly ids = new IdMap();
  /** step name → the server's frames (or stored values) for it, in order. */
  readonly outputs = new Map<string, Value[]>();

  constructor(readonly blocks: Block[]) {}

  marked(name: string): { index: number; shown: Message[] } | undefined {
    const index = this.blocks.findIndex((b) => b.marker?.kind === 'server-output' && b.marker.arg === name);
    if (index === -1) return undefined;
    return { index, shown: (this.blocks[index] as Block).messages.filter((m) => isServerOutput(m.value)) };
  }

  /** The README's request for the step, as shown (README ids). */
  shownRequest(name: string): Value | undefined {
    const m = this.marked(name);
    const id = m?.shown[0]?.value.id;
    if (!m || id === undefined) return undefined;
    for (let i = m.index; i >= Math.max(0, m.index - 2); i--) {
      const req = (this.blocks[i] as Block).messages.find((x) => typeof x.value.method === 'string' && x.value.id === id);
      if (req) return req.value;
    }
    return undefined;
  }

  /** Keeps `values` as the step's output and learns the ids they show. */
  record(name: string, values: Value[]): void {
    expect(this.outputs.has(name), `step ${name} ran twice`).toBe(false);
    this.outputs.set(name, values);
    const m = this.marked(name);
    values.forEach((v, i) => this.ids.learn(v, m?.shown[i]?.value));
  }

  /** Sends the step's request (the README's unless given) and keeps the answer. */
  async step(sc: RawSidecar, name: string, request?: Value, tweak: (r: Value) => Value = (r) => r): Promise<Value> {
    const shown = request ?? this.shownRequest(name);
    expect(shown, `step ${name}: the README shows no request with the answer's id, and the scenario gives none`).toBeDefined();
    const text = this.ids.actualIds(JSON.stringify(tweak(shown as Value)));
    const answer = (await sc.call(text)).value;
    this.record(name, [answer]);
    return answer;
  }

  /** The answer of a request that is not itself an example (setting the stage). */
  async call(sc: RawSidecar, request: Value): Promise<Value> {
    const answer = (await sc.call(this.ids.actualIds(JSON.stringify({ jsonrpc: '2.0', ...request })))).value;
    expect(answer.error, `${JSON.stringify(request)}`).toBeUndefined();
    return answer.result as Value;
  }
}

export const INIT = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}';
