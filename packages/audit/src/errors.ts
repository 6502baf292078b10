// The audit log's two errors: configuration it cannot honor (thrown where it is built), and a record
// it could not write (a rejection a caller can act on). Neither message ever holds a key or a value.

/** Options `auditLog`, `verifyAuditLog` or a key helper cannot honor. */
export class AuditConfigError extends Error {
  override readonly name = 'AuditConfigError';
  readonly code = 'ERR_AUDIT_CONFIG';
}

/** The log could not take a record now: the store is down, too slow, or the log is closed. */
export class AuditUnavailableError extends Error {
  override readonly name = 'AuditUnavailableError';
  readonly code = 'AUDIT_UNAVAILABLE';
  constructor(
    message: string,
    /** Records of calls that ran, kept in memory until the store takes them. */
    readonly pending: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A short name for what failed, safe for an event: the error's class and code, never its message. */
export function failureOf(error: unknown): string {
  const name =
    error instanceof Error && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.name) ? error.name : 'Error';
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(code) ? `${name} ${code}` : name;
}
