export { createEvidence, type EvidenceDeps, objectLock, objectLockKey } from "./app.ts";
export { EvidenceConfigSchema, type EvidenceEnv } from "./config.ts";
export { type EvidenceInfra, type EvidenceSettings, startEvidence } from "./start.ts";
