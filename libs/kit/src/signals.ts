// Running a service until it is asked to stop (signals), and the sleep of its loops.

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
 * The sleep a service's loop takes between rounds (the scheduler's delivery, the notifier's), which
 * {@link WakeableSleep.wake} cuts short when there is news (a moved clock, new work).
 */
export class WakeableSleep {
  private wakeUp: (() => void) | null = null;

  /** Resolves after `ms`, or at the next {@link wake}, whichever comes first. */
  sleep(ms: number): Promise<void> {
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

  /** Ends the sleep under way, if one is. */
  wake(): void {
    this.wakeUp?.();
  }
}
