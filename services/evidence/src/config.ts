import { BLOB_ENV, BLOB_STORE_REQUIRED, blobStoreChosen } from "@baton/blob";
import { always, OPS_ENV, SHARED_ENV } from "@baton/kit";
import { z } from "zod";

/** The evidence service's configuration, from the environment. */
export const EvidenceConfigSchema = z
  .object({
    DATABASE_URL: SHARED_ENV.DATABASE_URL,
    NATS_URL: SHARED_ENV.NATS_URL,
    BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
    ...BLOB_ENV,
    BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
    BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
    ...OPS_ENV,
  })
  .refine(blobStoreChosen, { ...BLOB_STORE_REQUIRED, ...always })
  .describe(
    "File bytes: BATON_S3_BUCKET (S3; the same bucket as the gateway's) or BATON_BLOB_DIR (one host, the gateway's directory); one of the two is required.",
  );
export type EvidenceEnv = z.infer<typeof EvidenceConfigSchema>;
