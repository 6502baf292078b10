// The audit log's two errors: configuration it cannot honor (thrown where it is built), and a record
// it could not write (a rejection a caller can act on). Neither message ever holds a key or a value.
// Each is built from its facts; the message is written from them here, never read back.

/** The facts of an audit error: what failed, and why. */
export interface AuditErrorFacts {
  /** What was being built or read: `auditLog`, `audit checkpoint`, `audit head`, … */
  readonly subject: string;
  /** What is wrong with it, as a clause: no subject, no closing period. */
  readonly problem: string;
}

/** Options `auditLog`, `verifyAuditLog` or a key helper cannot honor. */
export class AuditConfigError extends Error {
  override readonly name = 'AuditConfigError';
  readonly code = 'ERR_AUDIT_CONFIG';
  readonly subject: string;
  readonly problem: string;
  /** The option at fault when the problem names one (`signingKey`, `digestKey`, `store`, …). */
  readonly option?: string;
  constructor(facts: AuditErrorFacts & { readonly option?: string }) {
    super(messageOf(facts));
    this.subject = facts.subject;
    this.problem = facts.problem;
    if (facts.option !== undefined) this.option = facts.option;
  }
}

/** The log could not take a record now: the store is down, too slow, or the log is closed. */
export class AuditUnavailableError extends Error {
  override readonly name = 'AuditUnavailableError';
  readonly code = 'AUDIT_UNAVAILABLE';
  /** The log that failed (`auditLog`). */
  readonly subject: string;
  /** What failed, as a clause: no subject, no closing period. */
  readonly problem: string;
  constructor(
    facts: AuditErrorFacts,
    /** Records of calls that ran, kept in memory until the store takes them. */
    readonly pending: number,
    options?: { cause?: unknown },
  ) {
    super(messageOf(facts), options);
    this.subject = facts.subject;
    this.problem = facts.problem;
  }
}

/** Every message of this package: `subject: problem.` */
function messageOf({ subject, problem }: AuditErrorFacts): string {
  return `${subject}: ${problem}.`;
}

/** `'name' must be …`: a problem with the option it names, for the errors of one option. */
export function optionError(subject: string, option: string, clause: string): AuditConfigError {
  return new AuditConfigError({ subject, problem: `'${option}' ${clause}`, option });
}

/** A short name for what failed, safe for an event: the error's class and code, never its message. */
export function failureOf(error: unknown): string {
  const name =
    error instanceof Error && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.name) ? error.name : 'Error';
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(code) ? `${name} ${code}` : name;
}
