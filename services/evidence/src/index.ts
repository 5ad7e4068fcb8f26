export {
  createEvidence,
  type EvidenceDeps,
  type FileCheck,
  type FileMeta,
  objectLock,
  objectLockKey,
} from "./app.ts";
export { main } from "./main.ts";
