// V8's gc, exposed at runtime, so a test that must collect garbage needs no --expose-gc flag.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's gc, or undefined where the runtime does not let it be exposed. */
export function exposeGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}
