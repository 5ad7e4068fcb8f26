import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import S3rver from "s3rver";

/**
 * A real S3-compatible server for a test (issue #10): `s3rver` on a free port of 127.0.0.1, its data
 * in a temporary directory removed on {@link S3Server.stop}. It answers PUT, HEAD, GET, LIST, DELETE
 * and presigned GETs; it neither checks presigned signatures nor returns SHA-256 checksums, so Baton
 * must not rely on either (URL expiry and tampering are proven on the local store's signed URLs).
 */
export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  port: number;
  /** The bucket made at start. */
  bucket: string;
  /** The environment that points `baton serve gateway|evidence` at this bucket. */
  env: Record<string, string>;
  /** An SDK client of the test's own, to look into the bucket or change it behind Baton's back. */
  client: S3Client;
  /** Every key in the bucket, sorted. */
  keys(): Promise<string[]>;
  /** The bytes under `key`, or null. */
  read(key: string): Promise<Buffer | null>;
  /** Overwrites `key` with `bytes`, as someone with access to the bucket could. */
  overwrite(key: string, bytes: Buffer): Promise<void>;
  /** Makes one more bucket. */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** s3rver's fixed credentials (it checks request signatures against them). */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

/** Starts s3rver with one bucket (default `baton-test`); resolves once it answers. */
export async function startS3(bucket = "baton-test"): Promise<S3Server> {
  const dir = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory: dir, silent: true });
  const address = (await server.run()) as unknown as { port: number };
  const endpoint = `http://127.0.0.1:${address.port}`;
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const createBucket = async (name: string) => {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  };
  await createBucket(bucket);
  return {
    endpoint,
    port: address.port,
    bucket,
    env: {
      BATON_S3_BUCKET: bucket,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      BATON_S3_FORCE_PATH_STYLE: "true",
    },
    client,
    async keys() {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, ...(token ? { ContinuationToken: token } : {}) }),
        );
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async read(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from((await out.Body?.transformToByteArray()) ?? []);
      } catch (error) {
        if ((error as { name?: string }).name === "NoSuchKey") return null;
        throw error;
      }
    },
    async overwrite(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    createBucket,
    async stop() {
      client.destroy();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
