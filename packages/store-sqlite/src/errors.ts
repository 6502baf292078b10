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
  [/^(SQLITE_FULL|ENOSPC|EDQUOT)/, 'the disk is full. Free some space'],
  [
    /^(EACCES|EPERM|EROFS)$/,
    'the file cannot be written. Check the permissions of the file and its directory',
  ],
  [/^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)/, 'an entry with this key is already stored'],
];

// SQLite's result codes by number (https://sqlite.org/rescode.html): node:sqlite reports the
// number (`errcode`, extended when there is one) under its own code ERR_SQLITE_ERROR.
const PRIMARY_CODES: readonly string[] = [
  'OK',
  'ERROR',
  'INTERNAL',
  'PERM',
  'ABORT',
  'BUSY',
  'LOCKED',
  'NOMEM',
  'READONLY',
  'INTERRUPT',
  'IOERR',
  'CORRUPT',
  'NOTFOUND',
  'FULL',
  'CANTOPEN',
  'PROTOCOL',
  'EMPTY',
  'SCHEMA',
  'TOOBIG',
  'CONSTRAINT',
  'MISMATCH',
  'MISUSE',
  'NOLFS',
  'AUTH',
  'FORMAT',
  'RANGE',
  'NOTADB',
];
const EXTENDED_CODES: ReadonlyMap<number, string> = new Map([
  [261, 'BUSY_RECOVERY'],
  [517, 'BUSY_SNAPSHOT'],
  [773, 'BUSY_TIMEOUT'],
  [275, 'CONSTRAINT_CHECK'],
  [787, 'CONSTRAINT_FOREIGNKEY'],
  [1299, 'CONSTRAINT_NOTNULL'],
  [1555, 'CONSTRAINT_PRIMARYKEY'],
  [2067, 'CONSTRAINT_UNIQUE'],
]);

/** SQLite's name for the failure (`SQLITE_BUSY`), or the error's own code when it is not SQLite's. */
function codeOf(error: unknown): string | undefined {
  const { code, errcode } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    errcode?: unknown;
  };
  if (typeof errcode === 'number' && Number.isInteger(errcode)) {
    const name = EXTENDED_CODES.get(errcode) ?? PRIMARY_CODES[errcode & 0xff];
    if (name !== undefined) return `SQLITE_${name}`;
  }
  return typeof code === 'string' ? code : undefined;
}

/** `SqliteStoreError` for `error`, raised while the store `store` on `path` tried to `action`. */
export function storeError(store: string, path: string, action: string, error: unknown): SqliteStoreError {
  if (error instanceof SqliteStoreError) return error;
  const code = codeOf(error);
  const detail = error instanceof Error ? error.message : String(error);
  const hint = code === undefined ? undefined : HINTS.find(([pattern]) => pattern.test(code))?.[1];
  const what = hint === undefined ? detail : `${hint} (${code}: ${detail})`;
  return new SqliteStoreError(store, path, code, `${store} (${path}): could not ${action}: ${what}.`, {
    cause: error,
  });
}
