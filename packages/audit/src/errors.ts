// The audit log's two errors: configuration it cannot honor (thrown where it is built), and a record
// it could not write (a rejection a caller can act on). Neither message ever holds a key or a value.

/** Options `auditLog`, `verifyAuditLog` or a key helper cannot honor. */
export class AuditConfigError extends Error {
  override readonly name = 'AuditConfigError';
  readonly code = 'ERR_AUDIT_CONFIG';
  /** What was being built or read: `auditLog`, `audit checkpoint`, `audit head`, … */
  readonly subject: string;
  /** What is wrong with it, as a clause: no subject, no closing period. */
  readonly problem: string;
  /** The option at fault when the problem names one (`signingKey`, `digestKey`, `store`, …). */
  readonly option?: string;
  constructor(message: string) {
    super(message);
    // Every message of this package is written `subject: problem.`; the facts come from that one
    // format, here, so a caller never reads them back out of the text.
    const [subject, problem] = splitMessage(message);
    this.subject = subject;
    this.problem = problem;
    const option = /^'([A-Za-z][\w.]*)'/.exec(problem)?.[1];
    if (option !== undefined) this.option = option;
  }
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
    [this.subject, this.problem] = splitMessage(message);
  }
  /** The log that failed (`auditLog`). */
  readonly subject: string;
  /** What failed, as a clause: no subject, no closing period. */
  readonly problem: string;
}

function splitMessage(message: string): [subject: string, problem: string] {
  const at = message.indexOf(': ');
  const clause = message.endsWith('.') ? message.slice(0, -1) : message;
  return at < 0 ? ['', clause] : [clause.slice(0, at), clause.slice(at + 2)];
}

/** A short name for what failed, safe for an event: the error's class and code, never its message. */
export function failureOf(error: unknown): string {
  const name =
    error instanceof Error && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.name) ? error.name : 'Error';
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(code) ? `${name} ${code}` : name;
}
