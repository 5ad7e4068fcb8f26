import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import {
  attachmentDisposition,
  type BlobStore,
  BlobUnavailable,
  md5Hex,
  type PresignOptions,
  type PutResult,
  type StoredObject,
} from "./store.ts";

/** Where and how to reach a bucket (from `AWS_*` and `BATON_S3_*`, see `config.ts`). */
export interface S3Options {
  bucket: string;
  /** `AWS_REGION`. */
  region: string;
  /** `AWS_ENDPOINT_URL_S3`: a non-AWS store (MinIO, s3rver, …) or an AWS endpoint; absent for AWS's default. */
  endpoint?: string;
  /** `BATON_S3_PUBLIC_ENDPOINT`: where clients reach the store, for presigned URLs, when not at `endpoint`. */
  publicEndpoint?: string;
  /** `BATON_S3_FORCE_PATH_STYLE`: `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>`. */
  forcePathStyle: boolean;
  /** Static credentials; absent to use the SDK's default chain (environment, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** How long one request may take before it fails (and the caller answers `retry`), ms. Default 10 s. */
  requestTimeoutMs?: number;
}

/**
 * Whether `endpoint` is AWS's own S3 (absent, or a host under `amazonaws.com`). Recent SDK versions
 * add CRC32 checksums to requests and validate them on responses; other S3-compatible stores (and
 * presigned GETs through them) break on those, so for them checksums are sent only when required.
 */
export function isAwsEndpoint(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return true;
  try {
    const host = new URL(endpoint).hostname;
    return host === "amazonaws.com" || host.endsWith(".amazonaws.com") || host.endsWith(".amazonaws.com.cn");
  } catch {
    return false;
  }
}

/** The SDK configuration for `options`, reaching the store at `endpoint`. */
export function s3ClientConfig(options: S3Options, endpoint: string | undefined): S3ClientConfig {
  const config: S3ClientConfig = {
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: options.requestTimeoutMs ?? 10_000 },
  };
  if (endpoint !== undefined) config.endpoint = endpoint;
  if (!isAwsEndpoint(endpoint)) {
    config.requestChecksumCalculation = "WHEN_REQUIRED";
    config.responseChecksumValidation = "WHEN_REQUIRED";
  }
  if (options.credentials) config.credentials = options.credentials;
  return config;
}

/** An entity tag without its quotes, lowercase; null when absent. */
function bareEtag(etag: string | undefined): string | null {
  return etag ? etag.replace(/^W\//, "").replace(/"/g, "").toLowerCase() : null;
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function isNotFound(error: unknown): boolean {
  const e = error as SdkError;
  return e?.name === "NotFound" || e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404;
}

/**
 * A blob store in one S3 bucket (AWS S3, MinIO or any S3-compatible store). Keys are
 * `<org>/<sha256>`. A `put` first asks for the object (HEAD) and writes only when it is absent or its
 * ETag is not the MD5 of the bytes (a damaged object is repaired); every PUT carries `Content-MD5`, so
 * the store refuses bytes damaged on the way. The ETag is returned for recording only when it equals
 * that MD5, which is what makes verification by HEAD sound (§5).
 */
export class S3BlobStore implements BlobStore {
  readonly kind = "s3" as const;
  private readonly client: S3Client;
  private readonly presigner: S3Client;

  constructor(private readonly options: S3Options) {
    this.client = new S3Client(s3ClientConfig(options, options.endpoint));
    // Presigned URLs name the host they were signed for: the public one when clients reach the
    // store elsewhere than the services do (compose, a cluster-internal endpoint).
    this.presigner =
      options.publicEndpoint !== undefined && options.publicEndpoint !== options.endpoint
        ? new S3Client(s3ClientConfig(options, options.publicEndpoint))
        : this.client;
  }

  get location(): string {
    return `s3://${this.options.bucket}${this.options.endpoint ? ` at ${this.options.endpoint}` : ""}`;
  }

  private unavailable(what: string, error: unknown): BlobUnavailable {
    const e = error as SdkError;
    const status = e?.$metadata?.httpStatusCode;
    const cause = [e?.name ?? "Error", e?.code, status ? `HTTP ${status}` : undefined, e?.message]
      .filter(Boolean)
      .join(" ");
    return new BlobUnavailable(`the file store ${this.location} failed to ${what}: ${cause}`, {
      cause: error,
    });
  }

  async put(key: string, bytes: Buffer): Promise<PutResult> {
    const md5 = md5Hex(bytes);
    const existing = await this.head(key);
    if (existing && existing.etag === md5 && existing.bytes === bytes.length)
      return { etag: md5, written: false };
    let etag: string | null;
    try {
      const out = await this.client.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.length,
          ContentMD5: Buffer.from(md5, "hex").toString("base64"),
          ContentType: "application/octet-stream",
        }),
      );
      etag = bareEtag(out.ETag);
    } catch (error) {
      throw this.unavailable(`store ${key}`, error);
    }
    return { etag: etag === md5 ? md5 : null, written: true };
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      if (!out.Body) return Buffer.alloc(0);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.unavailable(`read ${key}`, error);
    }
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return {
        key,
        bytes: out.ContentLength ?? 0,
        modifiedAt: out.LastModified?.getTime() ?? 0,
        etag: bareEtag(out.ETag),
      };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.unavailable(`look up ${key}`, error);
    }
  }

  async list(
    prefix: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ objects: StoredObject[]; cursor: string | null }> {
    try {
      const out = await this.client.send(
        new ListObjectsCommand({
          Bucket: this.options.bucket,
          Prefix: prefix,
          MaxKeys: Math.max(1, Math.min(limit, 1000)),
          ...(cursor ? { Marker: cursor } : {}),
        }),
      );
      const objects = (out.Contents ?? []).flatMap((o): StoredObject[] =>
        o.Key === undefined
          ? []
          : [
              {
                key: o.Key,
                bytes: o.Size ?? 0,
                modifiedAt: o.LastModified?.getTime() ?? 0,
                etag: bareEtag(o.ETag),
              },
            ],
      );
      // ListObjects (v1) with a key as the marker, not v2's continuation token: the cursor stays a
      // plain key, the same on both stores, survives objects deleted between pages, and works on
      // every S3-compatible store (s3rver's v2 tokens use DES, which Node's OpenSSL 3 refuses).
      const last = objects.at(-1);
      return { objects, cursor: out.IsTruncated && last ? last.key : null };
    } catch (error) {
      throw this.unavailable(`list ${prefix}`, error);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
    } catch (error) {
      if (isNotFound(error)) return;
      throw this.unavailable(`delete ${key}`, error);
    }
  }

  async presign(key: string, options: PresignOptions): Promise<string> {
    try {
      return await getSignedUrl(
        this.presigner,
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: key,
          ResponseContentDisposition: attachmentDisposition(options.fileName),
          ResponseContentType: options.contentType,
        }),
        { expiresIn: options.expiresInSeconds },
      );
    } catch (error) {
      throw this.unavailable(`sign a download of ${key}`, error);
    }
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
    } catch (error) {
      const e = error as SdkError;
      const status = e?.$metadata?.httpStatusCode;
      if (status === 404 || e?.name === "NotFound" || e?.name === "NoSuchBucket")
        throw new BlobUnavailable(
          `the bucket ${this.options.bucket} does not exist at ${this.options.endpoint ?? `AWS S3 (${this.options.region})`}; create it, or set BATON_S3_BUCKET to one that exists`,
          { cause: error },
        );
      if (status === 403 || status === 401)
        throw new BlobUnavailable(
          `access to the bucket ${this.options.bucket} was refused (HTTP ${status}); check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the role's policy`,
          { cause: error },
        );
      throw this.unavailable("answer (is AWS_ENDPOINT_URL_S3 right, and the store running?)", error);
    }
  }

  /** Closes the SDK's connections. */
  close(): void {
    this.client.destroy();
    if (this.presigner !== this.client) this.presigner.destroy();
  }
}
