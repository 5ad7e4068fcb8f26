export { createEngine, type EngineDeps, type EngineService } from "./app.ts";
export { EngineConfigSchema, type EngineEnv, engineSettings } from "./config.ts";
export { KeyedMutex } from "./keyed-mutex.ts";
export { KvPartitionOwnership } from "./partitions/kv-ownership.ts";
export { AllPartitions, type PartitionOwnership } from "./partitions/ownership.ts";
export { type EngineInfra, type EngineSettings, startEngine } from "./start.ts";
