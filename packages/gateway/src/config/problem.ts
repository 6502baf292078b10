// What each loading step reports: a problem at a path in the configuration. The loader places it
// in the file (line and column) and scrubs it of interpolated values.

import type { ConfigPath } from './errors';

export interface Problem {
  readonly path: ConfigPath;
  readonly message: string;
  readonly fix?: string;
  /** Place it at the key rather than the value. */
  readonly key?: boolean;
}
