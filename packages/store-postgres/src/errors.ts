// The one error every store operation rejects with: it names the store and what failed, says whether
// waiting can help, and never carries the connection string or the password, which a pg error or a
// caller's log line could otherwise echo.

/** A store operation failed. `code` is PostgreSQL's SQLSTATE, Node's (e.g. `ECONNREFUSED`) or `ERR_STORE_CLOSED`. */
export class PostgresStoreError extends Error {
  override readonly name = 'PostgresStoreError';
  constructor(
    readonly store: string,
    readonly code: string | undefined,
    /** True when the same operation may succeed later: the server is down, restarting or busy. */
    readonly retryable: boolean,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// SQLSTATE classes and Node codes that mean the server or the network, not the request, failed.
const RETRYABLE_CLASSES = ['08', '53', '57', '58', '40'];
const RETRYABLE_NODE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
// node-postgres raises these as plain Errors without a code.
const RETRYABLE_TEXT =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i;

const HINTS: readonly (readonly [RegExp, string])[] = [
  [
    /^(08|57P0[1-3]|ECONN|ETIMEDOUT|EPIPE|EHOST|ENOTFOUND)/,
    'the server cannot be reached or is restarting. Retrying later may help',
  ],
  [/^53/, 'the server is out of resources (connections, memory or disk). Retrying later may help'],
  [/^40/, 'the transaction was rolled back by a conflict. Retrying may help'],
  [/^23505$/, 'an entry with this key is already stored'],
  [/^28/, 'the server refused the credentials. Check the user and password the store connects with'],
  [/^3D000$/, 'the database does not exist'],
  [
    /^42501$/,
    'the user lacks a privilege the store needs (creating its tables, or reading and writing them)',
  ],
];

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** Whether `error` from pg means the server or connection failed rather than the statement. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof PostgresStoreError) return error.retryable;
  const code = codeOf(error);
  if (code !== undefined && (RETRYABLE_NODE.has(code) || RETRYABLE_CLASSES.includes(code.slice(0, 2)))) {
    return true;
  }
  return error instanceof Error && RETRYABLE_TEXT.test(error.message);
}

/** Removes every secret in `secrets` from `text`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret !== '') out = out.split(secret).join('[redacted]');
  return out;
}

/** `PostgresStoreError` for `error`, raised while the store `store` tried to `action`. */
export function storeError(
  store: string,
  action: string,
  error: unknown,
  secrets: readonly string[],
): PostgresStoreError {
  if (error instanceof PostgresStoreError) return error;
  const code = codeOf(error);
  const detail = scrub(error instanceof Error ? error.message : String(error), secrets);
  const hint = code === undefined ? undefined : HINTS.find(([pattern]) => pattern.test(code))?.[1];
  const retryable = isRetryable(error);
  let what = detail;
  if (hint !== undefined) what = `${hint} (${code}: ${detail})`;
  else if (retryable) what = `the server did not complete the operation. Retrying later may help (${detail})`;
  // The cause is left out: a pg error carries the client, and the client its configuration.
  return new PostgresStoreError(store, code, retryable, `${store}: could not ${action}: ${what}.`);
}
