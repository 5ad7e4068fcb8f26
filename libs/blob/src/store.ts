import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * Where file bytes live (ARCHITECTURE: "S3 holds file bytes, content-addressed by SHA-256 per
 * organization"; local disk for `baton dev`). Bytes never cross the bus: the gateway writes them here
 * and the evidence service records and verifies them.
 */
export interface BlobStore {
  /** Stores `bytes` under `key`; idempotent (same key, same bytes). */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes under `key`, or null when absent. */
  get(key: string): Promise<Buffer | null>;
}

/** The content-addressed key of a file: `<org>/<sha256 hex>`. */
export function blobKey(org: string, sha256: string): string {
  return `${encodeURIComponent(org)}/${sha256}`;
}

/**
 * A blob store on local disk under `root`. Writes go to a temporary file first and are renamed into
 * place, so a reader never sees half a file and a crash leaves no torn object.
 */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    if (key.includes("..")) throw new Error(`bad blob key ${key}`);
    return join(this.root, key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const target = this.path(key);
    // Content-addressed: an object already there with exactly these bytes needs no write; one that
    // was damaged (same size, other bytes) is replaced, so a fresh upload repairs it.
    const existing = await this.get(key);
    if (existing?.equals(bytes)) return;
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, target);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }
}

/** Lowercase hex SHA-256 of bytes. */
export function sha256Hex(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
