import { CHECK_ENV, checkEnvIssues, evaluatorSettings } from "@baton/check";
import { OPS_ENV, SHARED_ENV } from "@baton/kit";
import { z } from "zod";
import type { RegistrySettings } from "./start.ts";

/**
 * The registry service's configuration, from the environment. `BATON_CHECK_*` decides whether a
 * process using `check` can be published (check.md: "a server … without an evaluator configured
 * refuses such a process at publication"); set it as on the gateway and the engine.
 */
export const RegistryConfigSchema = z
  .object({
    DATABASE_URL: SHARED_ENV.DATABASE_URL,
    NATS_URL: SHARED_ENV.NATS_URL,
    BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
    BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
    BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
    ...OPS_ENV,
    ...CHECK_ENV,
  })
  .superRefine(checkEnvIssues);
export type RegistryEnv = z.infer<typeof RegistryConfigSchema>;

/** A registry replica's settings from its environment: whether an evaluator is configured. */
export function registrySettings(env: RegistryEnv): RegistrySettings {
  return { evaluator: evaluatorSettings(env) !== null };
}
