// One write at a time per run in this replica.
/**
 * Serializes async work per key (ARCHITECTURE rule 5: "the server, not the client, resolves
 * concurrent writes to one run"). Work on different keys runs concurrently; work on one key runs in
 * arrival order, one at a time.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` once every earlier `work` for `key` has settled; returns its result. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return current;
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
