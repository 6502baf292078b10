// attach(dispatcher): the same Dispatcher, with one record per dispatch and resume. Wrapping keeps the
// core free of the log (nothing is paid where no log is attached) and sees the whole outcome, ledger
// included. The store is asked before the call runs, so under 'refuse' no tool runs unrecorded.

import {
  newId,
  refusalReason,
  TOOL_NAME_PATTERN,
  type AuditRecord,
  type CheckInDecision,
  type CheckInRequest,
  type DispatchOptions,
  type DispatchOutcome,
  type Dispatcher,
  type Identity,
  type LedgerRow,
  type RefusedOutcome,
  type ResumeOptions,
  type ToolCall,
} from '@toolgate/core';
import { AuditConfigError, failureOf } from './errors';
import { isoTime, type AuditFields, type DigestTexts } from './record';

/** What an attached dispatcher needs of its log. */
export interface AuditCore {
  readonly mode: 'refuse' | 'allow';
  /** Whether a call's outcome waits for its record to be stored (`durability: 'record'`). */
  readonly awaitsRecord: boolean;
  /**
   * The canonical JSON text of a value, for a digest the log computes in this thread when it writes
   * the record (undefined: a value with no such text, so no digest); absent where the log cannot
   * digest in this thread.
   */
  readonly textForDigest: ((value: unknown) => string | undefined) | undefined;
  readonly maxPending: number;
  readonly clock: () => number;
  readonly ruleOf: (ledger: readonly LedgerRow[]) => string | undefined;
  /** True when a call may run recorded now without asking the store (it just took an append). */
  admittedNow(): boolean;
  /** Whether a call may run recorded now; `recovered` counts kept records written on the way. */
  admit(): Promise<
    { readonly ok: true; readonly recovered: number } | { readonly ok: false; readonly error: unknown }
  >;
  digestOrNothing(value: unknown): Promise<string | undefined>;
  /** Queues a call's record (kept if the store fails), `digests` computed when it is written; resolves once stored. */
  write(fields: AuditFields, digests?: DigestTexts): Promise<AuditRecord>;
  /** Queues a call's record as `write` does, for a caller that does not wait: `onFailed` hears a failed append. */
  queue(fields: AuditFields, digests: DigestTexts | undefined, onFailed: (error: unknown) => void): void;
  readonly pending: number;
  readonly closed: boolean;
}

/** The events an attached dispatcher emits besides the core's, on the dispatcher's emitter. */
export interface AuditEventMap {
  /** A record could not be written: before the call (`admit`, the call was refused) or after it (`append`, the record is kept). */
  'audit.failed': AuditEventBase & {
    readonly operation: 'admit' | 'append';
    readonly refused: boolean;
    readonly failure: string;
    readonly pending: number;
  };
  /** With `onAuditFailure: 'allow'`, a call ran while the store could not take its record; the record waits in memory. */
  'audit.failed-open': AuditEventBase & { readonly failure: string; readonly pending: number };
  /** Records kept while the store was down were written before this call. */
  'audit.recovered': AuditEventBase & { readonly written: number };
}

interface AuditEventBase {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly chainId: string;
  readonly at: number;
}

/** Resume refusals raised before the request's signature held: its identity and id are only claims. */
const UNVERIFIED = new Set(['CHECKIN_MALFORMED', 'CHECKIN_SIGNATURE', 'CHECKIN_NO_SERVICE']);
const MAX_TEXT = 1024;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' && value.length <= MAX_TEXT ? value : undefined;

/** The args as the model sent them, parsed when they came as JSON text. */
function sentArgs(raw: unknown): unknown {
  if (raw === undefined) return {};
  if (typeof raw !== 'string') return raw;
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

interface CallFacts {
  readonly identity?: Identity | undefined;
  readonly checkInId?: string | undefined;
  readonly approver?: string | undefined;
  readonly resumed: boolean;
}

const attachedBy = new WeakMap<Dispatcher, AuditCore>();
/** A deferred record's failure: the log already said it runs open. */
const ignoreFailure = (): void => undefined;
const ADMITTED = { ok: true, recovered: 0 } as const;

export function attachedDispatcher(core: AuditCore, inner: Dispatcher): Dispatcher {
  if (
    typeof inner !== 'object' ||
    inner === null ||
    typeof inner.dispatch !== 'function' ||
    typeof inner.resume !== 'function'
  ) {
    throw new AuditConfigError({
      subject: 'auditLog.attach',
      problem: 'expected a Dispatcher (from createDispatcher)',
    });
  }
  if (attachedBy.get(inner) === core) {
    throw new AuditConfigError({
      subject: 'auditLog.attach',
      problem: 'this dispatcher is already attached to this log; attach the original once',
    });
  }

  const emit = (
    type: keyof AuditEventMap,
    base: Omit<AuditEventBase, 'at'>,
    facts: Record<string, unknown>,
  ) => {
    if (inner.events.listenerCount(type) === 0) return;
    inner.events.emit(type as never, { type, ...base, at: core.clock(), ...facts } as never);
  };

  function refusal(toolName: string, toolCallId: string): RefusedOutcome {
    const named = inner.tools.has(toolName) ? `'${toolName}'` : 'the requested tool';
    const reason = refusalReason(
      `${named} did not run because its audit record cannot be written right now`,
      'Retrying in a moment may help',
      'If it keeps failing, tell the user the action is on hold until the audit log is back',
    );
    const source = inner.tools.get(toolName)?.source;
    const row: LedgerRow = { gate: 'audit', outcome: 'deny', why: reason, changed: false };
    return {
      kind: 'refused',
      toolName,
      toolCallId,
      ...(source !== undefined ? { toolSource: source } : {}),
      chainId: '',
      ran: false,
      gate: 'audit',
      code: 'AUDIT_UNAVAILABLE',
      reason,
      retryable: true,
      content: `[audit refused: ${reason}]`,
      ledger: [row],
    };
  }

  /** A rule reader that throws names no rule; the record still stands. */
  function ruleOrNothing(ledger: readonly LedgerRow[]): string | undefined {
    try {
      return core.ruleOf(ledger);
    } catch {
      return undefined;
    }
  }

  function fieldsOf(
    outcome: DispatchOutcome,
    facts: CallFacts,
    argsDigest: string | undefined,
    resultDigest: string | undefined,
  ): AuditFields {
    const verified = !(facts.resumed && outcome.kind === 'refused' && UNVERIFIED.has(outcome.code));
    const refused = outcome.kind === 'refused';
    const paused = outcome.kind === 'paused';
    // Every field named, in one literal (an absent one undefined, which the record leaves out): one
    // shape for every record, so the seal reads each field at one place.
    return {
      at: isoTime(core.clock()),
      tenant: verified ? text(facts.identity?.tenant) : undefined,
      principal: verified ? text(facts.identity?.principal) : undefined,
      tool: text(outcome.toolName),
      source: text(outcome.toolSource),
      chainId: text(outcome.chainId),
      rule: text(ruleOrNothing(outcome.ledger)),
      kind: outcome.kind,
      gate: text(refused ? outcome.gate : paused ? outcome.checkIn.asker : undefined),
      code: text(refused ? outcome.code : undefined),
      ran: outcome.ran,
      checkInId: text(paused ? outcome.checkIn.id : verified ? facts.checkInId : undefined),
      approver: text(facts.approver),
      argsDigest: text(argsDigest),
      resultDigest: text(resultDigest),
    };
  }

  async function audited(
    toolName: string,
    toolCallId: string,
    args: unknown,
    facts: CallFacts,
    run: () => Promise<DispatchOutcome>,
  ): Promise<DispatchOutcome> {
    const base = { toolName, toolCallId, chainId: '' };
    // The common case decides without a promise of its own.
    const admitted = core.admittedNow() ? ADMITTED : await core.admit();
    let deferred = false;
    if (!admitted.ok) {
      const failure = failureOf(admitted.error);
      if (core.mode === 'refuse' || core.closed || core.pending >= core.maxPending) {
        emit('audit.failed', base, { operation: 'admit', refused: true, failure, pending: core.pending });
        return refusal(toolName, toolCallId || newId('call'));
      }
      emit('audit.failed-open', base, { failure, pending: core.pending });
      deferred = true;
    } else if (admitted.recovered > 0) {
      emit('audit.recovered', base, { written: admitted.recovered });
    }
    const textForDigest = core.textForDigest;
    let outcome: DispatchOutcome;
    let fields: AuditFields;
    let digests: DigestTexts | undefined;
    if (textForDigest !== undefined) {
      // The texts now, as the values were at the call; their digests when the batch is written.
      const argsText = textForDigest(sentArgs(args));
      outcome = await run();
      const resultText = outcome.kind === 'result' ? textForDigest(outcome.value) : undefined;
      fields = fieldsOf(outcome, facts, undefined, undefined);
      digests = { args: argsText, result: resultText };
    } else {
      // Digesting the args (Web Crypto, in another thread) runs beside the chain.
      const argsDigesting = core.digestOrNothing(sentArgs(args));
      outcome = await run();
      const argsDigest = await argsDigesting;
      const resultDigest = outcome.kind === 'result' ? await core.digestOrNothing(outcome.value) : undefined;
      fields = fieldsOf(outcome, facts, argsDigest, resultDigest);
    }
    // What the report names, taken now: the queued record keeps this closure until the store takes
    // it, and a closure over `outcome` would keep the call's result and ledger alive that long.
    const after = { toolName: outcome.toolName, toolCallId: outcome.toolCallId, chainId: outcome.chainId };
    const failed = (error: unknown) => {
      emit('audit.failed', after, {
        operation: 'append',
        refused: false,
        failure: failureOf(error),
        pending: core.pending,
      });
    };
    if (deferred) {
      core.queue(fields, digests, ignoreFailure);
      return outcome;
    }
    if (!core.awaitsRecord) {
      // 'batch': the record is queued (kept if its commit fails); a failure is reported when it happens.
      core.queue(fields, digests, failed);
      return outcome;
    }
    try {
      await core.write(fields, digests);
    } catch (error) {
      failed(error);
    }
    return outcome;
  }

  function dispatch(call: ToolCall, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    const shape = (typeof call === 'object' && call !== null ? call : {}) as Partial<ToolCall>;
    const toolName =
      typeof shape.toolName === 'string' && TOOL_NAME_PATTERN.test(shape.toolName) ? shape.toolName : '';
    const toolCallId = text(shape.toolCallId) ?? '';
    const identity = (typeof opts === 'object' && opts !== null ? opts.identity : undefined) as
      Identity | undefined;
    return audited(toolName, toolCallId, shape.args, { identity, resumed: false }, () =>
      inner.dispatch(call, opts),
    );
  }

  function resume(
    request: CheckInRequest,
    decision: CheckInDecision,
    opts: ResumeOptions = {},
  ): Promise<DispatchOutcome> {
    const shape = (typeof request === 'object' && request !== null ? request : {}) as Partial<CheckInRequest>;
    const toolName =
      typeof shape.toolName === 'string' && TOOL_NAME_PATTERN.test(shape.toolName) ? shape.toolName : '';
    const facts: CallFacts = {
      identity: typeof shape.identity === 'object' && shape.identity !== null ? shape.identity : undefined,
      checkInId: text(shape.id),
      approver: text((decision as Partial<CheckInDecision> | null)?.by),
      resumed: true,
    };
    return audited(toolName, text(shape.toolCallId) ?? '', shape.args, facts, () =>
      inner.resume(request, decision, opts),
    );
  }

  const wrapped: Dispatcher = {
    dispatch,
    resume,
    schemas: () => inner.schemas(),
    on(type, listener) {
      inner.on(type, listener);
      return wrapped;
    },
    off(type, listener) {
      inner.off(type, listener);
      return wrapped;
    },
    get events() {
      return inner.events;
    },
    get tools() {
      return inner.tools;
    },
  };
  attachedBy.set(wrapped, core);
  return wrapped;
}
