import { OPS_ENV, SHARED_ENV } from "@baton/kit";
import { z } from "zod";

/** The registry service's configuration, from the environment. */
export const RegistryConfigSchema = z.object({
  DATABASE_URL: SHARED_ENV.DATABASE_URL,
  NATS_URL: SHARED_ENV.NATS_URL,
  BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
  BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
  BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
  ...OPS_ENV,
});
export type RegistryEnv = z.infer<typeof RegistryConfigSchema>;
