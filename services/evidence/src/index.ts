export { createEvidence, type EvidenceDeps } from "./app.ts";
export { main } from "./main.ts";
