import { defineConfig } from "vite";

/**
 * The console builds to static files served by the gateway at `/ui/` (issue #16). No inline script
 * or style ends up in `index.html`, so the gateway's Content-Security-Policy can forbid both.
 */
export default defineConfig({
  base: "/ui/",
  root: import.meta.dirname,
  publicDir: false,
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
    // The layout library (elkjs) is a large, separately loaded chunk used only where a map is drawn.
    chunkSizeWarningLimit: 2_000,
  },
});
