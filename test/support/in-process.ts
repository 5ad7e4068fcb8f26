import { type Bus, envelope } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import { silentLogger } from "@baton/kit";
import { DEFAULTS, type Identity, OFFERED_TOOLS, offeredProfiles, type ToolResult } from "@baton/protocol";
import { AllPartitions, createEngine, type EngineService } from "../../services/engine/src/index.ts";
import { createRegistry } from "../../services/registry/src/index.ts";

/**
 * What the in-process service tests (scheduler delivery, race, shared clock) share: services built
 * directly over embedded PostgreSQL and a bus the test chooses, with the protocol's defaults.
 */

/** An operator of the default organization: publishes, sends events, moves the manual clock. */
export const OPERATOR: Identity = {
  org: "default",
  kind: "person",
  id: "ops@example.com",
  groups: [],
  operator: true,
};

/**
 * An engine serving all `partitions` (default 4) itself, with the protocol's lease and run-data
 * defaults and a 5 s call timeout (ms). Not started.
 */
export function testEngine(deps: { db: Db; bus: Bus; clock: Clock; partitions?: number }): EngineService {
  const partitions = deps.partitions ?? 4;
  return createEngine({
    db: deps.db,
    bus: deps.bus,
    clock: deps.clock,
    log: silentLogger,
    ownership: new AllPartitions(partitions),
    settings: {
      partitions,
      leaseMs: DEFAULTS.leaseSeconds * 1000,
      runDataBytes: DEFAULTS.runDataBytes,
      operatorGroup: DEFAULTS.operatorGroup,
      secret: "in-process-test-secret-0123456789",
      callTimeoutMs: 5_000,
    },
  });
}

/**
 * Imports and publishes `source` as `folderName` through a registry built over `deps` (roles need
 * none bound), as {@link OPERATOR}. Returns the publish result; throws when the import is refused.
 */
export async function publishProcess(
  deps: { db: Db; bus: Bus; clock: Clock },
  folderName: string,
  source: string,
): Promise<ToolResult<unknown>> {
  const registry = createRegistry({
    db: deps.db,
    bus: deps.bus,
    clock: deps.clock,
    log: silentLogger,
    offers: { tools: OFFERED_TOOLS, profiles: offeredProfiles(false) },
  });
  const call = (payload: unknown) =>
    registry.handle(envelope("registry", OPERATOR, payload, Date.now() + 30_000) as never);
  const imported = await call({ op: "import", folderName, source });
  if (!imported.ok) throw new Error(JSON.stringify(imported.error));
  return call({ op: "publish", draftId: (imported.data as { draftId: string }).draftId });
}
