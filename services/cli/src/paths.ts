import { fileURLToPath } from "node:url";

/** The repository's `fixtures/` folder: the samples `baton dev` publishes. */
export const FIXTURES_DIR = fileURLToPath(new URL("../../../fixtures", import.meta.url));
