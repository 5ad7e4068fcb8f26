// Running a service until it is asked to stop (signals), and its background loops.

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      resolve(signal);
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
  });
}

/** A started service (each service's `start<Service>`): stopping it answers what is in flight, then lets go. */
export interface Running {
  stop(): Promise<void>;
}

/**
 * A service's background loop (the scheduler's timer delivery, the notifier's deliveries): one
 * `round` after another until {@link stop}, each returning how long to sleep before the next, ms
 * (0: go again at once). {@link wake} cuts the sleep short when there is news (a moved clock, new
 * work); with `wokenSkipsSleep`, news that came during a round also skips the sleep after it.
 */
export class ServiceLoop {
  private halted = false;
  private woken = false;
  private done: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly round: () => Promise<number>,
    private readonly options: { wokenSkipsSleep?: boolean } = {},
  ) {}

  /** True once {@link stop} was called. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Starts the rounds. */
  start(): void {
    this.done = this.run();
  }

  /** Ends the sleep under way, if one is, so the next round starts now. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops after the round under way; resolves when it is done. */
  async stop(): Promise<void> {
    this.halted = true;
    this.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.halted) {
      this.woken = false;
      const delay = await this.round();
      if (this.halted) return;
      if ((this.options.wokenSkipsSleep && this.woken) || delay === 0) continue;
      await this.sleep(delay);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
