// Starting one registry replica on the infrastructure it is given (`baton serve registry`, `baton dev`).
import type { Bus } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import type { Logger, Running } from "@baton/kit";
import { OFFERED_TOOLS, offeredProfiles } from "@baton/protocol";
import { createRegistry } from "./app.ts";

/**
 * How the registry runs: what this build offers (§4.2, §8). `evaluator`: an evaluator is configured
 * (`BATON_CHECK_*`), so `check-1` is offered with `parallel-1` (default false). `offers` overrides
 * both (tests).
 */
export interface RegistrySettings {
  evaluator?: boolean;
  offers?: { tools: readonly string[]; profiles: readonly string[] };
}

/** What the registry runs on. */
export interface RegistryInfra {
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
}

/** Starts serving `registry` and `registry.read`; stopping stops serving them. */
export async function startRegistry(settings: RegistrySettings, infra: RegistryInfra): Promise<Running> {
  const registry = createRegistry({
    ...infra,
    offers: settings.offers ?? {
      tools: OFFERED_TOOLS,
      profiles: offeredProfiles(settings.evaluator ?? false),
    },
  });
  await registry.start();
  return { stop: () => registry.stop() };
}
