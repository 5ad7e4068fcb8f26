import { describe, expect, it } from "vitest";
import { s3Options } from "./config.ts";
import { isAwsEndpoint, s3ClientConfig } from "./s3.ts";
import {
  attachmentDisposition,
  type BlobStore,
  blobKey,
  md5Hex,
  orgPrefix,
  type StoredObject,
  sha256Hex,
  shaOfKey,
} from "./store.ts";
import { verifyBlob } from "./verify.ts";

/** A store in a Map, to test verification without I/O; counts the calls that read bytes. */
class MemoryStore implements BlobStore {
  readonly kind = "s3" as const;
  readonly location = "memory";
  readonly objects = new Map<string, { bytes: Buffer; etag: string | null }>();
  gets = 0;
  async put(key: string, bytes: Buffer) {
    this.objects.set(key, { bytes, etag: md5Hex(bytes) });
    return { etag: md5Hex(bytes), written: true };
  }
  async get(key: string) {
    this.gets++;
    return this.objects.get(key)?.bytes ?? null;
  }
  async head(key: string): Promise<StoredObject | null> {
    const o = this.objects.get(key);
    return o ? { key, bytes: o.bytes.length, modifiedAt: 0, etag: o.etag } : null;
  }
  async list() {
    return { objects: [], cursor: null };
  }
  async delete(key: string) {
    this.objects.delete(key);
  }
  async presign() {
    return null;
  }
  async check() {}
}

describe("blob keys (§5: bytes content-addressed per organization)", () => {
  it("are <org>/<sha256> with the organization percent-encoded, so an org never reaches another's prefix", () => {
    const sha = sha256Hex(Buffer.from("x"));
    expect(blobKey("acme", sha)).toBe(`acme/${sha}`);
    expect(blobKey("a/b", sha)).toBe(`a%2Fb/${sha}`);
    expect(orgPrefix("a/b")).toBe("a%2Fb/");
    expect(shaOfKey(blobKey("acme", sha), orgPrefix("acme"))).toBe(sha);
    expect(shaOfKey(`acme/${sha}.tmp`, "acme/")).toBeNull();
    expect(shaOfKey(`acmex/${sha}`, "acme/")).toBeNull();
  });
});

describe("attachmentDisposition (§5 url: a browser downloads the file under its name, RFC 6266)", () => {
  it("gives an ASCII fallback and the exact UTF-8 name", () => {
    expect(attachmentDisposition("report.pdf")).toBe(
      `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    );
    expect(attachmentDisposition('Angebot "Müller" (1).pdf')).toBe(
      `attachment; filename="Angebot _M_ller_ (1).pdf"; filename*=UTF-8''Angebot%20%22M%C3%BCller%22%20%281%29.pdf`,
    );
  });
});

describe("S3 client configuration (issue #10: AWS S3, MinIO and other S3-compatible stores)", () => {
  it("sends checksums only when required to a non-AWS endpoint, as the SDK's defaults break presigned GETs there", () => {
    expect(isAwsEndpoint(undefined)).toBe(true);
    expect(isAwsEndpoint("https://s3.eu-west-1.amazonaws.com")).toBe(true);
    expect(isAwsEndpoint("http://minio:9000")).toBe(false);
    expect(isAwsEndpoint("http://amazonaws.com.evil.example")).toBe(false);
    const minio = s3ClientConfig(
      { bucket: "b", region: "us-east-1", forcePathStyle: true },
      "http://minio:9000",
    );
    expect(minio).toMatchObject({
      endpoint: "http://minio:9000",
      forcePathStyle: true,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
    const aws = s3ClientConfig({ bucket: "b", region: "eu-west-1", forcePathStyle: false }, undefined);
    expect(aws.requestChecksumCalculation).toBeUndefined();
    expect(aws.endpoint).toBeUndefined();
  });

  it("takes static credentials only as a pair, else leaves them to the SDK's default chain", () => {
    const base = {
      BATON_S3_BUCKET: "files",
      BATON_BLOB_DIR: undefined,
      AWS_REGION: "eu-central-1",
      AWS_ENDPOINT_URL_S3: "http://minio:9000",
      AWS_ACCESS_KEY_ID: "AK",
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_SESSION_TOKEN: undefined,
      BATON_S3_FORCE_PATH_STYLE: true,
      BATON_S3_PUBLIC_ENDPOINT: "http://localhost:9000",
    };
    expect(s3Options(base)).toEqual({
      bucket: "files",
      region: "eu-central-1",
      endpoint: "http://minio:9000",
      publicEndpoint: "http://localhost:9000",
      forcePathStyle: true,
    });
    expect(s3Options({ ...base, AWS_SECRET_ACCESS_KEY: "SK" }).credentials).toEqual({
      accessKeyId: "AK",
      secretAccessKey: "SK",
    });
  });
});

describe("verifyBlob (§5: the stored bytes still match the hash recorded at upload)", () => {
  const bytes = Buffer.from("signed contract");
  const sha256 = sha256Hex(bytes);
  const key = blobKey("acme", sha256);

  it("proves an object unchanged by one HEAD when its ETag was recorded, without reading the bytes", async () => {
    const store = new MemoryStore();
    const { etag } = await store.put(key, bytes);
    expect(await verifyBlob(store, key, { sha256, etag })).toBe("ok");
    expect(store.gets).toBe(0);
  });

  it("hashes the bytes when no ETag was recorded (local disk, stores whose ETag is not an MD5)", async () => {
    const store = new MemoryStore();
    await store.put(key, bytes);
    expect(await verifyBlob(store, key, { sha256, etag: null })).toBe("ok");
    expect(store.gets).toBe(1);
  });

  it("refuses an object altered behind the server's back, with or without a recorded ETag", async () => {
    const store = new MemoryStore();
    const { etag } = await store.put(key, bytes);
    const altered = Buffer.from("signed contract, amended");
    store.objects.set(key, { bytes: altered, etag: md5Hex(altered) });
    expect(await verifyBlob(store, key, { sha256, etag })).toBe("mismatch");
    expect(await verifyBlob(store, key, { sha256, etag: null })).toBe("mismatch");
  });

  it("a different ETag over the same bytes (rewritten another way) still verifies, by hashing", async () => {
    const store = new MemoryStore();
    const { etag } = await store.put(key, bytes);
    store.objects.set(key, { bytes, etag: "d41d8cd98f00b204e9800998ecf8427e-2" });
    expect(await verifyBlob(store, key, { sha256, etag })).toBe("ok");
    expect(store.gets).toBe(1);
  });

  it("reports a removed object as missing", async () => {
    const store = new MemoryStore();
    const { etag } = await store.put(key, bytes);
    await store.delete(key);
    expect(await verifyBlob(store, key, { sha256, etag })).toBe("missing");
    expect(await verifyBlob(store, key, { sha256, etag: null })).toBe("missing");
  });
});
