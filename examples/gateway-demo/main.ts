// pnpm gateway:demo — see demo.ts.
import { runDemo } from './demo';

runDemo().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
