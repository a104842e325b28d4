/**
 * SessionOrder (src/server/sessionOrder.ts): per-session arrival order on a connection, with
 * open/close/create as barriers. Driven with requests whose completion the test controls.
 */
import { describe, expect, it } from 'vitest';
import { isBarrier, SessionOrder } from '../../src/server/sessionOrder.js';

function gate() {
  let open!: () => void;
  const done = new Promise<void>((resolve) => { open = resolve; });
  return { done, open };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SessionOrder', () => {
  it('names open, close and create as barriers, nothing else', () => {
    expect(['session/open', 'session/close', 'session/create'].every(isBarrier)).toBe(true);
    expect(['session/append', 'session/update', 'state/set', 'session/compact', 'session/read'].some(isBarrier)).toBe(false);
  });

  it('a request after a barrier of its session waits for it; other sessions do not; non-barriers start at once, in order', async () => {
    const order = new SessionOrder();
    const started: string[] = [];
    const opening = gate();
    const run = (sid: string, name: string, barrier: boolean, until?: Promise<void>) =>
      order.run(sid, barrier, async () => { started.push(name); await until; return name; });
    const open = run('A', 'open A', true, opening.done);
    const append1 = run('A', 'append A1', false);
    const append2 = run('A', 'append A2', false);
    const other = run('B', 'append B', false);
    // synchronous start when nothing is ahead: the open and B's append, not A's appends
    expect(started).toEqual(['open A', 'append B']);
    await other;
    await tick();
    expect(started).toEqual(['open A', 'append B']);
    opening.open();
    await open;
    await Promise.all([append1, append2]);
    expect(started).toEqual(['open A', 'append B', 'append A1', 'append A2']);
  });

  it('a barrier waits for every earlier request of its session; later ones wait behind it even if they are not barriers', async () => {
    const order = new SessionOrder();
    const started: string[] = [];
    const slow = gate();
    const run = (name: string, barrier: boolean, until?: Promise<void>) =>
      order.run('A', barrier, async () => { started.push(name); await until; });
    const read = run('read', false, slow.done);
    const close = run('close', true);
    const append = run('append', false);
    await tick();
    expect(started).toEqual(['read']);
    slow.open();
    await Promise.all([read, close, append]);
    expect(started).toEqual(['read', 'close', 'append']);
  });

  it('a failing request releases its session: the next one runs and sees its own result', async () => {
    const order = new SessionOrder();
    const failed = order.run('A', true, () => Promise.reject(new Error('SessionLocked')));
    const next = order.run('A', false, async () => 'ran');
    await expect(failed).rejects.toThrow('SessionLocked');
    await expect(next).resolves.toBe('ran');
    const thrown = order.run('A', true, () => { throw new Error('sync'); });
    await expect(thrown).rejects.toThrow('sync');
    await expect(order.run('A', true, async () => 'again')).resolves.toBe('again');
  });
});
