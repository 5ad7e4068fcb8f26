export {
  BLOB_ENV,
  BLOB_STORE_REQUIRED,
  type BlobEnv,
  blobStoreChosen,
  openBlobStore,
  s3Options,
} from "./config.ts";
export { LocalBlobStore } from "./local.ts";
export { isAwsEndpoint, S3BlobStore, type S3Options, s3ClientConfig } from "./s3.ts";
export {
  attachmentDisposition,
  type BlobStore,
  BlobUnavailable,
  blobKey,
  md5Hex,
  orgPrefix,
  type PresignOptions,
  type PutResult,
  type StoredObject,
  sha256Hex,
  shaOfKey,
} from "./store.ts";
export { type BlobCheck, verifyBlob } from "./verify.ts";
