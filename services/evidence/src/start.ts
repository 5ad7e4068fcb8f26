// Starting one evidence replica on the infrastructure it is given (`baton serve evidence`, `baton dev`).
import type { BlobStore } from "@baton/blob";
import type { Bus } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Db } from "@baton/db";
import type { Health, Logger, Running } from "@baton/kit";
import { createEvidence } from "./app.ts";

/** How the evidence service runs: nothing to choose yet beyond its infrastructure. */
export type EvidenceSettings = Record<string, never>;

/** What the evidence service runs on: file bytes in `blobs`, their metadata in `db`. */
export interface EvidenceInfra {
  db: Db;
  bus: Bus;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
  /** `/readyz` (issue #13): the service adds its file store's check. */
  health?: Health;
}

/** Starts serving `evidence`; stopping stops serving it. */
export async function startEvidence(_settings: EvidenceSettings, infra: EvidenceInfra): Promise<Running> {
  infra.health?.add(infra.blobs.kind === "s3" ? "s3" : "blob_dir", () => infra.blobs.check());
  const evidence = createEvidence(infra);
  await evidence.start();
  return { stop: () => evidence.stop() };
}
