/**
 * Runs `run` for `key` after every earlier call for the same key has settled (its failure does
 * not stop the next): opens of one session take effect one at a time, in arrival order (an
 * upgrade from read to write closes and reopens). `pending` holds the tail of each key's chain.
 */
export async function oneAtATime<T>(pending: Map<string, Promise<unknown>>, key: string, run: () => Promise<T>): Promise<T> {
  const previous = pending.get(key) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(run);
  pending.set(key, mine);
  try {
    return await mine;
  } finally {
    if (pending.get(key) === mine) pending.delete(key);
  }
}
