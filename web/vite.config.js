import { defineConfig } from "vite";

// Built into the Python package so `make run` serves it with no npm on the machine.
export default defineConfig({
  base: "/",
  esbuild: { jsx: "automatic" },
  build: {
    outDir: "../confidant/web/static",
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
  },
});
