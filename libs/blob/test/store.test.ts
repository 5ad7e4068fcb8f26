import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { blobKey, LocalBlobStore } from "../src/index.ts";

const root = mkdtempSync(join(tmpdir(), "baton-blob-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("LocalBlobStore (§5: stored bytes match the hash recorded at upload)", () => {
  it("stores content-addressed bytes and reads them back", async () => {
    const store = new LocalBlobStore(root);
    const bytes = Buffer.from("screening report");
    const key = blobKey("acme", createHash("sha256").update(bytes).digest("hex"));
    await store.put(key, bytes);
    expect((await store.get(key))?.toString()).toBe("screening report");
    expect(await store.get(blobKey("acme", "0".repeat(64)))).toBeNull();
  });

  it("a fresh upload of the same content repairs an object damaged on disk (review finding)", async () => {
    const store = new LocalBlobStore(root);
    const bytes = Buffer.from("quote from Acme");
    const key = blobKey("acme", createHash("sha256").update(bytes).digest("hex"));
    await store.put(key, bytes);
    const path = join(root, key);
    const damaged = Buffer.from(readFileSync(path));
    damaged[0] = damaged[0] === 0x71 ? 0x51 : 0x71;
    writeFileSync(path, damaged);
    await store.put(key, bytes);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });
});
