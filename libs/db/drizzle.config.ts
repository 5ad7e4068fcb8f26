import { defineConfig } from "drizzle-kit";

/** `pnpm --filter @baton/db generate` writes a new SQL migration after a schema change. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.ts",
  out: "./drizzle",
});
