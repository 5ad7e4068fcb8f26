export { createEvidence, type EvidenceDeps, type FileCheck, type FileMeta } from "./app.ts";
export { main } from "./main.ts";
