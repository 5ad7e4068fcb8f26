import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type BlobStore, BlobUnavailable, type PutResult, type StoredObject } from "./store.ts";

/**
 * A blob store on local disk under `root` (`baton dev`, and `baton serve` on a single host with
 * `BATON_BLOB_DIR`). Writes go to a temporary file first and are renamed into place, so a reader never
 * sees half a file and a crash leaves no torn object. It has no entity tags: evidence on it is
 * verified by hashing the bytes (§5), and it cannot presign (the gateway signs `/files` URLs).
 */
export class LocalBlobStore implements BlobStore {
  readonly kind = "local" as const;

  constructor(private readonly root: string) {}

  get location(): string {
    return this.root;
  }

  private path(key: string): string {
    if (key.includes("..") || key.startsWith("/")) throw new Error(`bad blob key ${key}`);
    return join(this.root, key);
  }

  async put(key: string, bytes: Buffer): Promise<PutResult> {
    const target = this.path(key);
    // Content-addressed: an object already there with exactly these bytes needs no write; one that
    // was damaged (same size, other bytes) is replaced, so a fresh upload repairs it.
    const existing = await this.get(key);
    if (existing?.equals(bytes)) return { etag: null, written: false };
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, target);
    return { etag: null, written: true };
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const s = await stat(this.path(key));
      return { key, bytes: s.size, modifiedAt: Math.floor(s.mtimeMs), etag: null };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  async list(
    prefix: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ objects: StoredObject[]; cursor: string | null }> {
    // Keys are `<org>/<sha256>`: one directory per organization, so a prefix ending in `/` is a
    // directory whose files are listed in name order. Temporary files of writes in flight are skipped.
    const slash = prefix.lastIndexOf("/");
    const dir = prefix.slice(0, slash + 1);
    const start = prefix.slice(slash + 1);
    let names: string[];
    try {
      names = await readdir(this.path(dir || "."));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { objects: [], cursor: null };
      throw error;
    }
    const keys = names
      .filter((n) => n.startsWith(start) && !n.endsWith(".tmp"))
      .map((n) => `${dir}${n}`)
      .filter((k) => cursor === null || k > cursor)
      .sort();
    const objects: StoredObject[] = [];
    for (const key of keys) {
      if (objects.length === limit) break;
      const head = await this.head(key);
      if (head) objects.push(head);
    }
    const last = objects.at(-1);
    const more = last !== undefined && keys[keys.length - 1] !== last.key;
    return { objects, cursor: more ? last.key : null };
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async presign(): Promise<string | null> {
    return null;
  }

  async check(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
    } catch (error) {
      throw new BlobUnavailable(
        `the file directory ${this.root} cannot be used: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  }
}
