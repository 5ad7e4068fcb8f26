// Running a service until it is asked to stop: on the first SIGINT or SIGTERM.

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
