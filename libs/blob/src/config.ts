import { z } from "zod";
import { LocalBlobStore } from "./local.ts";
import { S3BlobStore, type S3Options } from "./s3.ts";
import type { BlobStore } from "./store.ts";

/**
 * The environment that chooses and reaches the blob store, in the AWS way (`AWS_REGION`,
 * `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ENDPOINT_URL_S3`) plus Baton's `BATON_S3_*`, so
 * AWS S3, MinIO and other S3-compatible stores all work. The gateway and the evidence service spread
 * these into their config schemas and refine with {@link blobStoreChosen}.
 */
export const BLOB_ENV = {
  BATON_S3_BUCKET: z
    .string()
    .min(3)
    .max(63)
    .optional()
    .describe(
      "S3 bucket holding file bytes, content-addressed as `<org>/<sha256>`. When set, the store is S3 (same on gateway and evidence); otherwise BATON_BLOB_DIR.",
    ),
  BATON_BLOB_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Without BATON_S3_BUCKET: a directory holding file bytes (a single-host deployment; gateway and evidence must share it).",
    ),
  AWS_REGION: z.string().min(1).default("us-east-1").describe("Region of the S3 bucket."),
  AWS_ENDPOINT_URL_S3: z
    .url()
    .optional()
    .describe(
      "S3 endpoint for a store other than AWS's (MinIO, Ceph, …), as the services reach it. Checksums are then sent only when required.",
    ),
  AWS_ACCESS_KEY_ID: z
    .string()
    .optional()
    .describe("S3 access key; without it (and AWS_SECRET_ACCESS_KEY) the SDK's default credential chain."),
  AWS_SECRET_ACCESS_KEY: z.string().optional().describe("S3 secret key (never logged)."),
  AWS_SESSION_TOKEN: z.string().optional().describe("Session token of temporary S3 credentials."),
  BATON_S3_FORCE_PATH_STYLE: z
    .stringbool()
    .default(false)
    .describe(
      "true: address objects as `<endpoint>/<bucket>/<key>` (MinIO and most non-AWS stores need it); false (the default): `<bucket>.<endpoint>/<key>`.",
    ),
  BATON_S3_PUBLIC_ENDPOINT: z
    .url()
    .optional()
    .describe(
      "Where clients (browsers, agents) reach the S3 store, when not at AWS_ENDPOINT_URL_S3 (compose, a cluster-internal endpoint): presigned file URLs name this host.",
    ),
} as const;

/** The parsed values of {@link BLOB_ENV}. */
export type BlobEnv = z.infer<z.ZodObject<typeof BLOB_ENV>>;

/**
 * Whether a configuration holding {@link BLOB_ENV} chose a store (S3 or a directory). Config schemas
 * refine with it and {@link BLOB_STORE_REQUIRED}.
 */
export function blobStoreChosen(c: {
  BATON_S3_BUCKET?: string | undefined;
  BATON_BLOB_DIR?: string | undefined;
}): boolean {
  return c.BATON_S3_BUCKET !== undefined || c.BATON_BLOB_DIR !== undefined;
}

/** The problem reported when no store was chosen. */
export const BLOB_STORE_REQUIRED = {
  message: "set BATON_S3_BUCKET (an S3 bucket) or BATON_BLOB_DIR (a directory, single host)",
  path: ["BATON_S3_BUCKET"],
};

/** The S3 options of a configuration with `BATON_S3_BUCKET` set. */
export function s3Options(env: BlobEnv & { BATON_S3_BUCKET: string }): S3Options {
  const options: S3Options = {
    bucket: env.BATON_S3_BUCKET,
    region: env.AWS_REGION,
    forcePathStyle: env.BATON_S3_FORCE_PATH_STYLE,
  };
  if (env.AWS_ENDPOINT_URL_S3 !== undefined) options.endpoint = env.AWS_ENDPOINT_URL_S3;
  if (env.BATON_S3_PUBLIC_ENDPOINT !== undefined) options.publicEndpoint = env.BATON_S3_PUBLIC_ENDPOINT;
  if (env.AWS_ACCESS_KEY_ID !== undefined && env.AWS_SECRET_ACCESS_KEY !== undefined) {
    options.credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN !== undefined ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
  }
  return options;
}

/**
 * The blob store `baton serve` uses: S3 when `BATON_S3_BUCKET` is set, else the directory
 * `BATON_BLOB_DIR`. Resolves once the store answers; throws `BlobUnavailable` saying what is wrong
 * (no such bucket, access refused, endpoint unreachable) so the service refuses to start clearly.
 */
export async function openBlobStore(env: BlobEnv): Promise<BlobStore> {
  let store: BlobStore;
  if (env.BATON_S3_BUCKET !== undefined)
    store = new S3BlobStore(s3Options({ ...env, BATON_S3_BUCKET: env.BATON_S3_BUCKET }));
  else if (env.BATON_BLOB_DIR !== undefined) store = new LocalBlobStore(env.BATON_BLOB_DIR);
  else throw new Error(BLOB_STORE_REQUIRED.message);
  await store.check();
  return store;
}
