import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../test/support/deploy.ts";
import { S3RVER_CREDENTIALS, type S3Server, startS3 } from "../../../test/support/s3.ts";
import {
  type BlobStore,
  BlobUnavailable,
  blobKey,
  LocalBlobStore,
  md5Hex,
  openBlobStore,
  orgPrefix,
  S3BlobStore,
  sha256Hex,
  verifyBlob,
} from "../src/index.ts";

const root = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "baton-blob-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const keyOf = (org: string, bytes: Buffer) => blobKey(org, createHash("sha256").update(bytes).digest("hex"));

describe("LocalBlobStore (§5: stored bytes match the hash recorded at upload)", () => {
  it("stores content-addressed bytes and reads them back", async () => {
    const store = new LocalBlobStore(root);
    const bytes = Buffer.from("screening report");
    const key = keyOf("acme", bytes);
    expect(await store.put(key, bytes)).toEqual({ etag: null, written: true });
    expect(await store.put(key, bytes)).toEqual({ etag: null, written: false });
    expect((await store.get(key))?.toString()).toBe("screening report");
    expect(await store.get(blobKey("acme", "0".repeat(64)))).toBeNull();
    expect(await store.head(key)).toMatchObject({ key, bytes: bytes.length, etag: null });
  });

  it("a fresh upload of the same content repairs an object damaged on disk (review finding)", async () => {
    const store = new LocalBlobStore(root);
    const bytes = Buffer.from("quote from Acme");
    const key = keyOf("acme", bytes);
    await store.put(key, bytes);
    const path = join(root, key);
    const damaged = Buffer.from(readFileSync(path));
    damaged[0] = damaged[0] === 0x71 ? 0x51 : 0x71;
    writeFileSync(path, damaged);
    expect(await verifyBlob(store, key, { sha256: sha256Hex(bytes), etag: null })).toBe("mismatch");
    await store.put(key, bytes);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(await verifyBlob(store, key, { sha256: sha256Hex(bytes), etag: null })).toBe("ok");
  });

  it("lists one organization's objects in pages and deletes them", async () => {
    const store = new LocalBlobStore(join(root, "listing"));
    const keys = [];
    for (const n of ["a", "b", "c"]) {
      const bytes = Buffer.from(`object ${n}`);
      keys.push(keyOf("org one", bytes));
      await store.put(keyOf("org one", bytes), bytes);
    }
    await store.put(keyOf("other", Buffer.from("x")), Buffer.from("x"));
    keys.sort();
    const first = await store.list(orgPrefix("org one"), null, 2);
    expect(first.objects.map((o) => o.key)).toEqual(keys.slice(0, 2));
    const second = await store.list(orgPrefix("org one"), first.cursor, 2);
    expect(second).toMatchObject({ objects: [{ key: keys[2] }], cursor: null });
    await store.delete(keys[0] as string);
    await store.delete(keys[0] as string);
    expect((await store.list(orgPrefix("org one"), null, 10)).objects).toHaveLength(2);
    expect(await store.list(orgPrefix("nobody"), null, 10)).toEqual({ objects: [], cursor: null });
  });
});

describe("S3BlobStore against a real S3-compatible server (s3rver; issue #10)", () => {
  let s3: S3Server;
  let store: S3BlobStore;
  beforeAll(async () => {
    s3 = await startS3();
    store = new S3BlobStore({
      bucket: s3.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    });
  });
  afterAll(async () => {
    store.close();
    await s3.stop();
  });

  it("stores under <org>/<sha256>, returns the ETag only as the MD5 of the bytes, and skips an identical PUT", async () => {
    const bytes = Buffer.from("invoice 2026-17");
    const key = keyOf("acme", bytes);
    const first = await store.put(key, bytes);
    expect(first).toEqual({ etag: md5Hex(bytes), written: true });
    expect(await s3.keys()).toContain(key);
    expect(await store.put(key, bytes)).toEqual({ etag: md5Hex(bytes), written: false });
    expect((await store.get(key))?.equals(bytes)).toBe(true);
    expect(await store.head(key)).toMatchObject({ key, bytes: bytes.length, etag: md5Hex(bytes) });
    expect(await store.get(blobKey("acme", "0".repeat(64)))).toBeNull();
    expect(await store.head(blobKey("acme", "0".repeat(64)))).toBeNull();
  });

  it("a fresh upload of the same content repairs an object altered in the bucket (the HEAD's ETag is not the MD5)", async () => {
    const bytes = Buffer.from("quote from Birch");
    const key = keyOf("acme", bytes);
    const { etag } = await store.put(key, bytes);
    await s3.overwrite(key, Buffer.from("quote from Birch, doubled"));
    expect(await verifyBlob(store, key, { sha256: sha256Hex(bytes), etag })).toBe("mismatch");
    expect(await store.put(key, bytes)).toEqual({ etag: md5Hex(bytes), written: true });
    expect((await s3.read(key))?.equals(bytes)).toBe(true);
    expect(await verifyBlob(store, key, { sha256: sha256Hex(bytes), etag })).toBe("ok");
    await store.delete(key);
    expect(await verifyBlob(store, key, { sha256: sha256Hex(bytes), etag })).toBe("missing");
  });

  it("presigns a GET that downloads the bytes under the file's name and media type (§5 url)", async () => {
    const bytes = Buffer.from("%PDF-1.7 pretend");
    const key = keyOf("acme", bytes);
    await store.put(key, bytes);
    const url = await store.presign(key, {
      fileName: "Vertrag Müller.pdf",
      contentType: "application/pdf",
      expiresInSeconds: 900,
    });
    expect(url).toMatch(/X-Amz-Expires=900/);
    expect(url).toMatch(/response-content-disposition=/);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/pdf");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="Vertrag M_ller.pdf"; filename*=UTF-8''Vertrag%20M%C3%BCller.pdf`,
    );
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("presigns for the public endpoint when clients reach the store elsewhere (BATON_S3_PUBLIC_ENDPOINT)", async () => {
    const publicStore = new S3BlobStore({
      bucket: s3.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
      publicEndpoint: "http://files.example.com:9000",
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    });
    const url = await publicStore.presign(blobKey("acme", "1".repeat(64)), {
      fileName: "a.txt",
      contentType: "text/plain",
      expiresInSeconds: 60,
    });
    expect(url.startsWith(`http://files.example.com:9000/${s3.bucket}/acme/`)).toBe(true);
    publicStore.close();
  });

  it("lists an organization's objects in pages with their age; another organization's never show", async () => {
    const keys: string[] = [];
    for (const n of [1, 2, 3]) {
      const bytes = Buffer.from(`paged ${n}`);
      keys.push(keyOf("paged org", bytes));
      await store.put(keyOf("paged org", bytes), bytes);
    }
    keys.sort();
    const first = await store.list(orgPrefix("paged org"), null, 2);
    expect(first.objects.map((o) => o.key)).toEqual(keys.slice(0, 2));
    expect(first.objects[0]?.modifiedAt).toBeGreaterThan(Date.now() - 3_600_000);
    const second = await store.list(orgPrefix("paged org"), first.cursor, 2);
    expect(second.objects.map((o) => o.key)).toEqual(keys.slice(2));
    expect(second.cursor).toBeNull();
    expect((await store.list(orgPrefix("paged"), null, 10)).objects).toEqual([]);
  });

  it("baton serve refuses to start, saying why, when the bucket is missing or the store unreachable", async () => {
    const env = {
      BATON_S3_BUCKET: "no-such-bucket",
      BATON_BLOB_DIR: undefined,
      AWS_REGION: "us-east-1",
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_SESSION_TOKEN: undefined,
      BATON_S3_FORCE_PATH_STYLE: true,
      BATON_S3_PUBLIC_ENDPOINT: undefined,
    };
    await expect(openBlobStore(env)).rejects.toThrow(/bucket no-such-bucket does not exist/);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = openBlobStore({ ...env, BATON_S3_BUCKET: s3.bucket, AWS_ENDPOINT_URL_S3: closed });
    await expect(unreachable).rejects.toBeInstanceOf(BlobUnavailable);
    await expect(unreachable).rejects.toThrow(closed);
    const opened: BlobStore = await openBlobStore({ ...env, BATON_S3_BUCKET: s3.bucket });
    expect(opened.kind).toBe("s3");
    await expect(openBlobStore({ ...env, BATON_S3_BUCKET: undefined })).rejects.toThrow(/BATON_S3_BUCKET/);
    expect((await openBlobStore({ ...env, BATON_S3_BUCKET: undefined, BATON_BLOB_DIR: root })).kind).toBe(
      "local",
    );
  });

  it("a store that is down fails every call with BlobUnavailable naming the store (callers answer retry)", async () => {
    const down = new S3BlobStore({
      bucket: "baton-test",
      region: "us-east-1",
      endpoint: `http://127.0.0.1:${await freePort()}`,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    });
    const key = blobKey("acme", "2".repeat(64));
    await expect(down.put(key, Buffer.from("x"))).rejects.toBeInstanceOf(BlobUnavailable);
    await expect(down.get(key)).rejects.toThrow(/the file store s3:\/\/baton-test at http/);
    await expect(down.head(key)).rejects.toBeInstanceOf(BlobUnavailable);
    down.close();
  });
});
