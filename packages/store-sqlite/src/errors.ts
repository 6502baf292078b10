// The one error every store operation rejects with: it names the store, the file and what failed,
// and says whether waiting can help, so an operator can act on it without reading SQLite codes.

/** A store operation failed. `code` is SQLite's (e.g. `SQLITE_BUSY`) or `ERR_STORE_CLOSED`. */
export class SqliteStoreError extends Error {
  override readonly name = 'SqliteStoreError';
  constructor(
    readonly store: string,
    readonly path: string,
    readonly code: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const HINTS: readonly (readonly [RegExp, string])[] = [
  [/^SQLITE_(BUSY|LOCKED)/, 'the database is locked by another connection. Retrying later may help'],
  [
    /^SQLITE_(NOTADB|CORRUPT)/,
    'the file is not a SQLite database or is corrupt. Restore it from a backup or point the store at another file',
  ],
  [/^SQLITE_CANTOPEN/, 'the file cannot be opened. Check that its directory exists and is writable'],
  [/^SQLITE_READONLY/, 'the database is read-only. Check the permissions of the file and its directory'],
  [/^SQLITE_FULL/, 'the disk is full. Free some space'],
  [/^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)/, 'an entry with this key is already stored'],
];

/** `SqliteStoreError` for `error`, raised while the store `store` on `path` tried to `action`. */
export function storeError(store: string, path: string, action: string, error: unknown): SqliteStoreError {
  if (error instanceof SqliteStoreError) return error;
  const code =
    typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : undefined;
  const detail = error instanceof Error ? error.message : String(error);
  const hint = code === undefined ? undefined : HINTS.find(([pattern]) => pattern.test(code))?.[1];
  const what = hint === undefined ? detail : `${hint} (${code}: ${detail})`;
  return new SqliteStoreError(store, path, code, `${store} (${path}): could not ${action}: ${what}.`, {
    cause: error,
  });
}
