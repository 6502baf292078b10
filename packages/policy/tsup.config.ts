import { defineConfig } from 'tsup';

const shared = {
  entry: ['src/index.ts'],
  dts: true,
  sourcemap: true,
  target: 'node20',
} as const;

export default defineConfig([
  { ...shared, format: ['esm'] },
  // cel-js ships ESM only: the CommonJS build carries it, so require() works on every Node 20.
  { ...shared, format: ['cjs'], noExternal: ['@marcbachmann/cel-js'] },
]);
