// Starting one engine replica on the infrastructure it is given (`baton serve engine`, `baton dev`).
import { type Bus, NatsBus } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import type { Health, Logger, Running } from "@baton/kit";
import { createEngine, type EngineDeps } from "./app.ts";
import { KvPartitionOwnership } from "./partitions/kv-ownership.ts";
import { AllPartitions, type PartitionOwnership } from "./partitions/ownership.ts";

/** How an engine replica runs (`config.ts` reads it from the environment). */
export type EngineSettings = EngineDeps["settings"] & {
  /** This replica's name in partition ownership and logs. */
  replicaId: string;
};

/** What an engine replica runs on. */
export interface EngineInfra {
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** `/readyz` (issue #13): the replica adds its partition ownership check. */
  health?: Health;
}

/**
 * Which partitions a replica on `bus` serves (ARCHITECTURE rule 5): over NATS, the share it holds in
 * the namespace's `<namespace>_partitions` KV bucket among the replicas alive; in one process (the
 * in-process bus, where no other replica can be), every partition.
 */
function ownershipOn(bus: Bus, settings: EngineSettings, log: Logger): PartitionOwnership {
  if (!(bus instanceof NatsBus)) return new AllPartitions(settings.partitions);
  return new KvPartitionOwnership(bus.connection, {
    replicaId: settings.replicaId,
    partitions: settings.partitions,
    bucket: `${bus.namespace}_partitions`,
    log,
  });
}

/** Starts serving this replica's partitions, `engine.read` and `engine.journal`; stopping hands the partitions over. */
export async function startEngine(settings: EngineSettings, infra: EngineInfra): Promise<Running> {
  const ownership = ownershipOn(infra.bus, settings, infra.log);
  const engine = createEngine({ ...infra, ownership, settings });
  infra.health?.add("partitions", async () => {
    if (!ownership.joined) throw new Error("this replica has not joined partition ownership (NATS KV)");
  });
  await engine.start();
  infra.log.info({ replica: settings.replicaId }, "engine serving");
  return { stop: () => engine.stop() };
}
