import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO } from "../support/deploy.ts";
import { type S3Server, startS3 } from "../support/s3.ts";

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");

/**
 * Issue #10: `baton serve gateway|evidence` use S3 when `BATON_S3_BUCKET` is set and otherwise
 * `BATON_BLOB_DIR`, refuse to start with neither, and say clearly when the bucket cannot be reached.
 * The store is opened before PostgreSQL and NATS, so these starts need neither.
 */
describe("baton serve and the blob store (issue #10)", () => {
  let s3: S3Server;
  let dir: string;
  beforeAll(async () => {
    s3 = await startS3();
    dir = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "blob-startup-"));
  });
  afterAll(async () => {
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `baton serve <service>` with `env` and resolves with how it ended (it must end by itself). */
  async function serve(service: string, env: Record<string, string>) {
    const base = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("BATON_") && !k.startsWith("AWS_")),
    );
    try {
      await run(process.execPath, ["--import", "tsx", CLI, "serve", service], {
        cwd: REPO,
        timeout: 60_000,
        env: {
          ...base,
          DATABASE_URL: "postgres://127.0.0.1:1/never",
          NATS_URL: "nats://127.0.0.1:1",
          BATON_SECRET: "blob-startup-secret-0123456789",
          BATON_PUBLIC_URL: "http://127.0.0.1:1",
          BATON_DEV_ISSUER_FILE: join(dir, "dev-issuer.json"),
          ...env,
        },
      });
      return { code: 0, stderr: "" };
    } catch (error) {
      const e = error as { code?: number; stderr?: string };
      return { code: e.code, stderr: e.stderr ?? "" };
    }
  }

  it("refuses to start with neither a bucket nor a directory, saying which to set", async () => {
    for (const service of ["evidence", "gateway"]) {
      const ended = await serve(service, {});
      expect(ended.code).toBe(2);
      expect(ended.stderr).toContain(
        "BATON_S3_BUCKET: set BATON_S3_BUCKET (an S3 bucket) or BATON_BLOB_DIR (a directory, single host)",
      );
    }
  });

  it("refuses to start, naming the bucket and the cause, when the bucket is missing or its endpoint does not answer", async () => {
    const missing = await serve("evidence", { ...s3.env, BATON_S3_BUCKET: "no-such-bucket" });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `baton serve evidence: the bucket no-such-bucket does not exist at ${s3.endpoint}`,
    );
    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await serve("gateway", { ...s3.env, AWS_ENDPOINT_URL_S3: closed });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      `baton serve gateway: the file store s3://${s3.bucket} at ${closed} failed to answer`,
    );
    expect(unreachable.stderr).not.toContain(s3.env.AWS_SECRET_ACCESS_KEY as string);
  });
});
