// Starting one scheduler replica on the infrastructure it is given (`baton serve scheduler`, `baton dev`).
import { type Bus, NatsBus } from "@baton/bus";
import type { Clock, ClockMover } from "@baton/clock";
import type { Db } from "@baton/db";
import type { Logger, Running } from "@baton/kit";
import { createScheduler, type SchedulerFaults, type SchedulerSettings } from "./app.ts";
import { SCHEDULER_DEFAULTS } from "./config.ts";
import { reportDueWork } from "./gauges.ts";
import { startRetention } from "./retention.ts";

/** A test hook of the exactly-once tests (`BATON_SCHEDULER_FAULT`): where the replica kills itself. */
export type SchedulerFault = "kill-after-take" | "kill-after-send";

/** What a scheduler replica runs on. */
export interface SchedulerInfra {
  db: Db;
  bus: Bus;
  /** The clock every service of the deployment reads. */
  clock: Clock;
  /** The handle that moves `clock`; null when it is real time. */
  mover: ClockMover | null;
  log: Logger;
}

/**
 * The {@link SchedulerFaults} of a test hook: SIGKILL, the hard way, exactly where the exactly-once
 * tests need it, after NATS has everything this replica sent (issue #5).
 */
function faultsOf(fault: SchedulerFault | undefined, infra: SchedulerInfra): SchedulerFaults {
  if (fault === undefined) return {};
  const die = async () => {
    if (infra.bus instanceof NatsBus) await infra.bus.flush();
    infra.log.warn({ fault }, "test fault: SIGKILL");
    process.kill(process.pid, "SIGKILL");
  };
  return fault === "kill-after-take" ? { afterTake: die } : { afterSend: die };
}

/** Starts delivering due timers and serving `scheduler`; stopping ends both. */
export async function startScheduler(
  settings: SchedulerSettings & { fault?: SchedulerFault | undefined },
  infra: SchedulerInfra,
): Promise<Running> {
  const { fault, ...rest } = settings;
  const scheduler = createScheduler({ ...infra, settings: rest, faults: faultsOf(fault, infra) });
  await scheduler.start();
  const unreport = reportDueWork(infra.db, infra.clock);
  const retention = startRetention(infra, {
    idempotencyMs: rest.idempotencyRetentionMs ?? SCHEDULER_DEFAULTS.idempotencyRetentionMs,
    intervalMs: rest.retentionIntervalMs ?? SCHEDULER_DEFAULTS.retentionIntervalMs,
  });
  return {
    stop: async () => {
      unreport();
      await retention.stop();
      await scheduler.stop();
    },
  };
}
