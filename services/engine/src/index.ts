export { createEngine, type EngineDeps, type EngineService } from "./app.ts";
export { KeyedMutex } from "./keyed-mutex.ts";
export { main } from "./main.ts";
export { KvLeases } from "./partitions/leases.ts";
export { AllPartitions, type Ownership } from "./partitions/ownership.ts";
