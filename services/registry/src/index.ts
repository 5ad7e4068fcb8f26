export { createRegistry, type DraftView, type Published, type RegistryDeps } from "./app.ts";
export { RegistryConfigSchema, type RegistryEnv, registrySettings } from "./config.ts";
export { type RegistryInfra, type RegistrySettings, startRegistry } from "./start.ts";
