export { createEngine, type EngineDeps, type EngineService } from "./app.ts";
export { EngineConfigSchema, type EngineEnv, engineSettings } from "./config.ts";
export { KeyedMutex } from "./keyed-mutex.ts";
export { KvLeases } from "./partitions/leases.ts";
export { AllPartitions, type Ownership } from "./partitions/ownership.ts";
export { type EngineInfra, type EngineSettings, startEngine } from "./start.ts";
