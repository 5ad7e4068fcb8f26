// Which partitions this engine replica serves: the interface, and owning all of them (`baton dev`).
/**
 * Which partitions this engine replica serves (ARCHITECTURE rule 5). The engine subscribes to a
 * partition's subject when it acquires it and drops its hot runs when it loses it.
 */
export interface PartitionOwnership {
  start(
    onAcquire: (partition: number) => Promise<void>,
    onRelease: (partition: number) => Promise<void>,
  ): Promise<void>;
  /** Releases every owned partition (so another replica takes over at once) and stops. */
  stop(): Promise<void>;
  /**
   * Whether this replica has joined partition ownership: its last round reached the ownership
   * store and it holds its share (which may be none, with more replicas than partitions). The
   * engine's readiness check (`/readyz`, issue #13).
   */
  readonly joined: boolean;
}

/** Owns every partition: the single engine of `baton dev`. */
export class AllPartitions implements PartitionOwnership {
  private release: ((p: number) => Promise<void>) | null = null;
  joined = false;

  constructor(private readonly partitions: number) {}

  async start(
    onAcquire: (p: number) => Promise<void>,
    onRelease: (p: number) => Promise<void>,
  ): Promise<void> {
    this.release = onRelease;
    for (let p = 0; p < this.partitions; p++) await onAcquire(p);
    this.joined = true;
  }

  async stop(): Promise<void> {
    this.joined = false;
    if (!this.release) return;
    for (let p = 0; p < this.partitions; p++) await this.release(p);
    this.release = null;
  }
}
