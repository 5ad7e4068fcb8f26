import { SHARED_ENV } from "@baton/kit";
import { z } from "zod";

/** The evidence service's configuration, from the environment. */
export const EvidenceConfigSchema = z.object({
  DATABASE_URL: SHARED_ENV.DATABASE_URL,
  NATS_URL: SHARED_ENV.NATS_URL,
  BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
  BATON_BLOB_DIR: SHARED_ENV.BATON_BLOB_DIR,
  BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
  BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
});
export type EvidenceEnv = z.infer<typeof EvidenceConfigSchema>;
