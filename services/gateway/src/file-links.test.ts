import { FileUrls } from "@baton/auth";
import { blobKey, LocalBlobStore, S3BlobStore } from "@baton/blob";
import { type EvidenceCall, InProcessBus, SUBJECTS } from "@baton/bus";
import { systemClock } from "@baton/clock";
import { silentLogger } from "@baton/kit";
import type { FileMeta, Identity } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { createFileLinks } from "./file-links.ts";

const who: Identity = { org: "acme", kind: "person", id: "p@example.com", groups: [], operator: false };
const SHA = "a".repeat(64);
const META: FileMeta = {
  id: "f_1",
  sha256: SHA,
  bytes: 3,
  contentType: "application/pdf",
  fileName: "Q3 report.pdf",
};
const fileUrls = new FileUrls("file-links-test-secret-0123456789", "https://baton.example.com", 900_000);
// Presigning is computed locally (no request reaches the endpoint), so no store needs to run here.
const s3 = new S3BlobStore({
  bucket: "files",
  region: "us-east-1",
  endpoint: "http://127.0.0.1:9",
  publicEndpoint: "https://files.example.com",
  forcePathStyle: true,
  credentials: { accessKeyId: "AK", secretAccessKey: "SK" },
});

function links(blobs: S3BlobStore | LocalBlobStore, bus = new InProcessBus(), callTimeoutMs = 2_000) {
  return createFileLinks({
    bus,
    clock: systemClock,
    log: silentLogger,
    blobs,
    fileUrls,
    urlSeconds: 600,
    callTimeoutMs,
    attemptMs: 1_000,
  });
}

describe("file links (§5: wherever run data is returned, each file item carries a short-lived url)", () => {
  it("on S3: a presigned GET from the public endpoint, named for download, metadata asked once and cached", async () => {
    const bus = new InProcessBus();
    const asked: string[][] = [];
    bus.serve(SUBJECTS.evidence, async (env) => {
      const call = env.payload as EvidenceCall;
      if (call.op !== "meta") throw new Error(`unexpected ${call.op}`);
      asked.push(call.ids);
      return Object.fromEntries(call.ids.filter((id) => id === "f_1").map((id) => [id, META]));
    });
    const l = links(s3, bus);
    const urls = await l.urls(who, ["f_1", "f_1", "f_unknown"]);
    const url = new URL(urls.get("f_1") as string);
    expect(`${url.origin}${url.pathname}`).toBe(`https://files.example.com/files/${blobKey("acme", SHA)}`);
    expect(url.searchParams.get("X-Amz-Expires")).toBe("600");
    expect(url.searchParams.get("response-content-disposition")).toBe(
      `attachment; filename="Q3 report.pdf"; filename*=UTF-8''Q3%20report.pdf`,
    );
    expect(url.searchParams.get("response-content-type")).toBe("application/pdf");
    // A ref the evidence service does not know gets the gateway's link (which answers 404).
    expect(urls.get("f_unknown")).toMatch(
      /^https:\/\/baton\.example\.com\/files\/f_unknown\?org=acme&exp=\d+&sig=/,
    );
    await l.urls(who, ["f_1"]);
    expect(asked).toEqual([["f_1", "f_unknown"]]);
  });

  it("on S3 with the evidence service silent: the gateway's signed link stands in, never an error", async () => {
    const urls = await links(s3, new InProcessBus(), 150).urls(who, ["f_9"]);
    expect(urls.get("f_9")).toMatch(/^https:\/\/baton\.example\.com\/files\/f_9\?/);
  });

  it("on local disk: the gateway's signed link, with no call to the evidence service", async () => {
    const urls = await links(new LocalBlobStore("/nonexistent")).urls(who, ["f_1"]);
    expect(urls.get("f_1")).toMatch(/^https:\/\/baton\.example\.com\/files\/f_1\?org=acme&exp=\d+&sig=/);
  });
});
