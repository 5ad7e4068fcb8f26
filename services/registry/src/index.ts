export { createRegistry, type DraftView, type Published, type RegistryDeps } from "./app.ts";
export { main } from "./main.ts";
