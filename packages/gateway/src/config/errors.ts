// Configuration errors: each issue names the file, line and column, what is wrong and the fix.
// No issue ever carries a configured value, so a secret cannot reach a terminal or a log.

export type ConfigPath = readonly (string | number)[];

export interface ConfigIssue {
  /** Where in the configuration, as keys and indexes: `['tenants', 'acme', 'upstreams', 0]`. */
  readonly path: ConfigPath;
  /** The file, when the configuration came from one. */
  readonly file?: string;
  /** 1-based, when known. */
  readonly line?: number;
  readonly column?: number;
  /** What is wrong, without the value. */
  readonly message: string;
  /** How to fix it. */
  readonly fix?: string;
}

/** `tenants.acme.upstreams[0]` */
export function pathText(path: ConfigPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else
      text += /^[A-Za-z_$][\w$-]*$/.test(segment)
        ? text === ''
          ? segment
          : `.${segment}`
        : `[${JSON.stringify(segment)}]`;
  }
  return text === '' ? '(top level)' : text;
}

export function formatIssue(issue: ConfigIssue): string {
  const where =
    issue.file === undefined
      ? 'config'
      : issue.line === undefined
        ? issue.file
        : `${issue.file}:${issue.line}:${issue.column ?? 1}`;
  const fix = issue.fix === undefined ? '' : ` Fix: ${issue.fix}`;
  return `${where}: ${pathText(issue.path)}: ${issue.message}.${fix}`;
}

/** The configuration cannot be used; `issues` says every reason found, in file order. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'ERR_TOOLGATE_CONFIG';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    const sorted = [...issues].sort(
      (a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0),
    );
    const count = sorted.length === 1 ? '1 error' : `${sorted.length} errors`;
    super(
      `invalid toolgate configuration (${count}):\n${sorted.map((i) => `  ${formatIssue(i)}`).join('\n')}`,
    );
    this.issues = sorted;
  }
}

/** The closest known word, for "did you mean". */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}
