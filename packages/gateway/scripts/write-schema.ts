// Writes schema/toolgate.schema.json (shipped for editors and `$schema`) from src/config/schema.ts.
import { writeFileSync } from 'node:fs';
import { configSchema } from '../src/config/schema';

writeFileSync(
  new URL('../schema/toolgate.schema.json', import.meta.url),
  `${JSON.stringify(configSchema, null, 2)}\n`,
);
