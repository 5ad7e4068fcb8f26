export { type BlobStore, blobKey, LocalBlobStore, sha256Hex } from "./store.ts";
