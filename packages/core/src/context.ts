// The per-call context every middleware reads, and the bookkeeping behind its verbs: which
// middleware is speaking, the ledger, the first refusal or pause, and what the executor recorded.

import type { Chain, PauseService } from './chain';
import type { CheckInApproval, CheckInDecision, CheckInReceipt, CheckInRequest } from './check-in';
import { neverAborted } from './abort';
import { askHuman } from './asking';
import { digestOf } from './canonical';
import { contentText, isContentResult } from './content';
import type { Credential } from './credential';
import type { EventBase, GateEvent, ToolgateEventMap, ToolgateEventType } from './events';
import type { Identity } from './identity';
import type { LedgerRow } from './outcomes';
import type { FiledPass, Plan } from './plan';
import type { ArtifactMeta } from './ports';
import { redact, redactValue } from './redact';
import { Pause, Refusal, refusalReason, sentence, type RefusalDetail } from './refusal';
import type { AskOptions, CheckInRequirement, ToolMiddlewareContext, ToolState } from './middleware-context';
import type { JsonSchema, Tool, ToolArgs } from './tool';
import { pollutingKeyPath, unsafeKeyReason } from './unsafe-keys';

/** Marks a tool failure travelling out through the onion; it is not any middleware's refusal. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
}

/** What a resumed run carries: the verified request, the human's decision, and whether its asker was reached. */
export interface ResumeState {
  readonly request: CheckInRequest;
  readonly decision: CheckInDecision;
  answered: boolean;
}

/** One call, as the dispatcher hands it to its run. */
export interface CallInit {
  readonly tool: Tool;
  readonly chain: Chain;
  readonly args: Readonly<ToolArgs>;
  readonly toolCallId: string;
  readonly identity: Identity | undefined;
  readonly signal: AbortSignal | undefined;
  readonly resume: ResumeState | undefined;
}

const NO_RECEIPTS: readonly CheckInReceipt[] = Object.freeze([]);
const NO_REQUIREMENTS: readonly CheckInRequirement[] = Object.freeze([]);

/** What a dispatcher lends every call: its clock and its event emitter. */
export interface CallEnvironment {
  readonly now: () => number;
  /** Whether anyone listens to `type`; events nobody hears are never built. */
  readonly wants: (type: string) => boolean;
  /** True when nobody listens to anything: no listener can run while the call proceeds. */
  readonly quiet: () => boolean;
  readonly emit: (type: string, event: Record<string, unknown>) => void;
}

/**
 * A frozen shallow copy with spread's semantics (own enumerable keys, `__proto__` kept as a plain key).
 * The explicit prototype is for speed only: V8 freezes a plain `{ ...value }` copy several times more
 * slowly, and args are copied on every dispatch.
 */
export function frozenCopy(value: ToolArgs): Readonly<ToolArgs> {
  return Object.freeze({ __proto__: Object.prototype, ...value }) as Readonly<ToolArgs>;
}

/** A value of the kind a schema `type` names that says nothing: what an args stand-in holds. */
function inertValueOf(schema: unknown): unknown {
  const declared = typeof schema === 'object' && schema !== null ? (schema as JsonSchema)['type'] : undefined;
  const type = Array.isArray(declared) ? declared[0] : declared;
  // Same field representation as a real value (small integer, double, pointer), so the shape matches.
  if (type === 'integer') return 0;
  if (type === 'number') return 0.5;
  if (type === 'boolean') return false;
  if (type === 'string') return '';
  return null;
}

/**
 * A stand-in for a tool's args, copied as `frozenCopy` copies a call's: its declared properties in
 * schema order, each holding an inert value of the declared type, never any call's data. A copy's
 * hidden class is reached only through weak transitions: with no call in flight a full GC frees it,
 * and V8 throws away the optimized code of every function that read args (the unsafe-key walk,
 * validate-args, ajv's validator), to compile it again on the next calls. While the stand-in lives,
 * so does the hidden class of args that name the same properties in the same order.
 */
export function argsStandIn(inputSchema: JsonSchema): Readonly<ToolArgs> | undefined {
  const properties = inputSchema['properties'];
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined;
  const names = Object.keys(properties);
  if (names.length === 0) return undefined;
  const inert: Record<string, unknown> = {};
  for (const name of names) {
    // A name like `__proto__` would set a prototype here, not a property: no stand-in for such a schema.
    if (name === '__proto__') return undefined;
    inert[name] = inertValueOf((properties as Record<string, unknown>)[name]);
  }
  return frozenCopy(inert);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function requireWhy(verb: string, why: unknown): string {
  if (typeof why !== 'string' || why.trim() === '') {
    throw new TypeError(
      `ctx.${verb}(value, why): 'why' is required whenever a value changes; say why in a few words.`,
    );
  }
  return why;
}

/** The runtime behind `ToolMiddlewareContext`. */
export class CallContext implements ToolMiddlewareContext {
  readonly toolName: string;
  // `declare`: an ES2022 class field would define these as undefined; they must be absent instead.
  declare readonly toolSource?: string;
  readonly toolCallId: string;
  readonly tool: Tool;
  declare readonly identity?: Identity;
  readonly resumed: boolean;
  readonly chainId: string;

  /** The args as dispatched, for a check-in request to replay. */
  readonly dispatchedArgs: Readonly<ToolArgs>;
  readonly ledger: LedgerRow[] = [];
  /** The first refusal or pause raised in this call; it decides the outcome. */
  stopped: Refusal | Pause | undefined;
  /** What `execute` threw, redacted. */
  failure: ToolFailure | undefined;
  /** Set when the outcome is built: nothing may execute after it. */
  closed = false;
  readonly resume: ResumeState | undefined;

  #args: Readonly<ToolArgs>;
  #credential: Credential | undefined;
  #wanted: Record<string, ArtifactMeta> | undefined;
  #checkIn: CheckInDecision | undefined;
  /** The last approval answered in this run: who asked, and the digest of the args the person saw. */
  #approved: { readonly asker: string; readonly argsDigest: string } | undefined;
  #ran = false;
  #hasResult = false;
  #result: unknown;
  #resultText: string | undefined;
  #error: { name: string; message: string } | undefined;
  #speaker = 'dispatch';
  #pendingWhy: string | undefined;
  #pendingChanged = false;
  readonly #env: CallEnvironment;
  readonly #callerSignal: AbortSignal | undefined;
  #ownSignal: AbortSignal | undefined;
  readonly #chain: Chain;
  readonly #plan: Plan;
  #required: CheckInRequirement[] | undefined;
  /** The rule each middleware named with decidedBy, by middleware name: filed on its rows. */
  #rules: Map<string, string> | undefined;
  /** The first requirement no approval has answered since it was made. */
  #unanswered: CheckInRequirement | undefined;
  #usedReceipts: Set<CheckInReceipt> | undefined;
  #receipts: CheckInReceipt[] | undefined;
  #state: (ToolState & Record<string, unknown>) | undefined;
  // Where the call has reached in the onion: turn i is the middleware at position i, and the turn
  // after the last middleware is the executor's. Turn i + 1 beginning means middleware i continued;
  // it ending means middleware i's downstream settled.
  #turns = 0;
  readonly #ended: boolean[] = [];

  constructor(init: CallInit, plan: Plan, env: CallEnvironment) {
    this.tool = init.tool;
    this.toolName = init.tool.schema.name;
    if (init.tool.source !== undefined) this.toolSource = init.tool.source;
    this.toolCallId = init.toolCallId;
    if (init.identity !== undefined) this.identity = init.identity;
    this.#callerSignal = init.signal;
    this.resume = init.resume;
    this.resumed = init.resume !== undefined;
    this.chainId = init.chain.id;
    this.#chain = init.chain;
    this.#plan = plan;
    this.dispatchedArgs = init.args;
    this.#args = init.args;
    this.#env = env;
  }

  /**
   * The caller's signal. Without one, a signal that never aborts: shared while gates run (they only
   * wait on it), the tool's own once it runs, so listeners a tool or its client library leaves on it
   * cannot pile up across calls. Built when first read: Node takes microseconds to build a signal.
   */
  get signal(): AbortSignal {
    if (this.#callerSignal !== undefined) return this.#callerSignal;
    if (!this.#ran) return neverAborted();
    return (this.#ownSignal ??= new AbortController().signal);
  }

  /** Built when first read: most calls never touch it. */
  get state(): ToolState & Record<string, unknown> {
    return (this.#state ??= {});
  }
  get args(): Readonly<ToolArgs> {
    return this.#args;
  }
  get credential(): Credential | undefined {
    return this.#credential;
  }
  get wanted(): Readonly<Record<string, ArtifactMeta>> | undefined {
    return this.#wanted;
  }
  get checkIn(): CheckInDecision | undefined {
    return this.#checkIn;
  }
  get checkInsRequired(): readonly CheckInRequirement[] {
    return this.#required ?? NO_REQUIREMENTS;
  }
  /** A requirement made in this run that no later approval answered, if any. */
  get unansweredRequirement(): CheckInRequirement | undefined {
    return this.#unanswered;
  }
  get ran(): boolean {
    return this.#ran;
  }
  get result(): unknown {
    return this.#result;
  }
  get hasResult(): boolean {
    return this.#hasResult;
  }
  get error(): { readonly name: string; readonly message: string } | undefined {
    return this.#error;
  }
  get resultText(): string | undefined {
    return this.#resultText;
  }
  /** The middleware currently running, for attribution. */
  get speaker(): string {
    return this.#speaker;
  }
  /** The dispatcher's clock, so event times and durations follow an injected clock. */
  now(): number {
    return this.#env.now();
  }
  /** The clock now when someone may hear a duration measured from here; undefined when nobody listens. */
  timerStart(): number | undefined {
    return this.#env.quiet() ? undefined : this.#env.now();
  }

  // Only identifying facts: args, results and the credential stay out of logs that stringify the context.
  toJSON(): Record<string, unknown> {
    return {
      toolName: this.toolName,
      ...(this.toolSource !== undefined ? { toolSource: this.toolSource } : {}),
      toolCallId: this.toolCallId,
      chainId: this.chainId,
      resumed: this.resumed,
      ran: this.#ran,
    };
  }

  deny(reason: string, detail: RefusalDetail | string = {}): never {
    const gate = this.#speaker;
    const text =
      typeof reason === 'string' && reason.trim() !== ''
        ? sentence(reason)
        : `'${this.toolName}' was refused.`;
    throw this.refuse(new Refusal(gate, text, typeof detail === 'string' ? { detail } : detail));
  }

  /** Records a refusal (the first one decides) and files its ledger row. Returns what to throw. */
  refuse(refusal: Refusal): Refusal | Pause | ToolFailure {
    if (this.stopped !== undefined) return this.stopped;
    // A tool failure stays a failure on its way out; an after-half cannot relabel it.
    if (this.failure !== undefined) return this.failure;
    let recorded = refusal;
    if (this.#ran && !refusal.mentionsRun) {
      // After-half refusal: the model must learn that the tool ran and its result was withheld.
      recorded = new Refusal(
        refusal.gate,
        refusalReason(refusal.reason, `'${this.toolName}' ran, but '${refusal.gate}' withheld its result`),
        {
          code: refusal.code,
          retryable: false,
          ...(refusal.detail !== undefined ? { detail: refusal.detail } : {}),
          mentionsRun: true,
        },
      );
    }
    this.stopped = recorded;
    this.#clearResult();
    this.#file(
      { gate: recorded.gate, outcome: 'deny', why: recorded.reason, changed: false },
      recorded.code,
      recorded.detail,
    );
    return recorded;
  }

  setArgs(value: ToolArgs, why: string): void {
    const reason = requireWhy('setArgs', why);
    if (this.#ran)
      throw new Error(`ctx.setArgs: the tool has already run; args can only change before execution.`);
    if (!isPlainObject(value)) throw new TypeError(`ctx.setArgs: args must be a plain object.`);
    const args = frozenCopy(value);
    // New args (an artifact's data swapped in, say) are held to the rule the model's args met at dispatch.
    const polluting = pollutingKeyPath(args);
    if (polluting !== undefined)
      throw new Refusal(this.#speaker, unsafeKeyReason(this.toolName, polluting), { code: 'UNSAFE_ARG_KEY' });
    this.#args = args;
    this.#pendingChanged = true;
    this.#pendingWhy = reason;
  }

  setResult(value: unknown, why: string): void {
    const reason = requireWhy('setResult', why);
    if (!this.#ran || !this.#hasResult) {
      throw new Error(
        `ctx.setResult: no middleware can answer for the tool; a result can only be replaced after the tool ran and returned.`,
      );
    }
    // A middleware's replacement is held to the same redaction as the tool's own result.
    const secrets = this.#credential?.secrets();
    const clean = secrets === undefined ? value : redactValue(value, secrets);
    // An MCP tool's blocks read as their text, as the executor reads the tool's own result.
    const text =
      this.toolSource !== undefined && isContentResult(clean) ? contentText(clean) : resultTextOf(clean);
    this.#result = clean;
    this.#resultText = secrets === undefined ? text : redact(text, secrets);
    this.#file({ gate: this.#speaker, outcome: 'transform', why: reason, changed: true });
  }

  requireCheckIn(why: string): void {
    if (typeof why !== 'string' || why.trim() === '') {
      throw new TypeError(`ctx.requireCheckIn(why): say in a few words why a person must approve.`);
    }
    if (this.#ran) throw new Error(`ctx.requireCheckIn: the tool has already run; require it before next().`);
    const requirement = Object.freeze({ gate: this.#speaker, why });
    (this.#required ??= []).push(requirement);
    this.#unanswered ??= requirement;
  }

  note(why: string): void {
    if (typeof why !== 'string' || why.trim() === '') return;
    // After the tool ran, the speaker's row was filed when it continued: a note in its after-half is a
    // decision of its own (a result flagged but passed), so it files an allow row now.
    if (this.#ran && this.#turns > 0) {
      this.#file({ gate: this.#speaker, outcome: 'allow', why, changed: false });
      return;
    }
    this.#pendingWhy = why;
  }

  decidedBy(rule: string): void {
    if (typeof rule !== 'string' || rule.trim() === '') {
      throw new TypeError(`ctx.decidedBy(rule): name the rule that decided, as its rule set names it.`);
    }
    (this.#rules ??= new Map()).set(this.#speaker, rule);
  }

  provideCredential(credential: Credential): void {
    if (this.#ran) throw new Error(`ctx.provideCredential: the tool has already run.`);
    this.#credential = credential;
  }

  provideWanted(arg: string, meta: ArtifactMeta): void {
    if (this.#ran) throw new Error(`ctx.provideWanted: the tool has already run.`);
    this.#wanted = { ...this.#wanted, [arg]: meta };
  }

  emit(event: GateEvent): void {
    const { type } = event;
    if (typeof type !== 'string' || !this.#env.wants(type)) return;
    // `type` leads: V8 builds an object literal that starts with a spread and goes on with more
    // properties several microseconds slower than one that starts with a property.
    const facts: Readonly<Record<string, unknown>> = event;
    this.#env.emit(type, { type, ...facts, ...this.eventBase(), gate: this.#speaker });
  }

  /** Emits a core event, building it only when someone listens. */
  publish<K extends ToolgateEventType>(
    type: K,
    facts: () => Omit<ToolgateEventMap[K], keyof EventBase>,
  ): void {
    if (!this.#env.wants(type)) return;
    this.#env.emit(type, { type, ...this.eventBase(), ...facts() });
  }

  eventBase(): EventBase {
    return {
      toolName: this.toolName,
      toolCallId: this.toolCallId,
      ...(this.toolSource !== undefined ? { toolSource: this.toolSource } : {}),
      chainId: this.chainId,
      ...(this.identity?.tenant !== undefined ? { tenant: this.identity.tenant } : {}),
      at: this.#env.now(),
    };
  }

  async ask(question: string, evidence?: unknown, options: AskOptions = {}): Promise<CheckInApproval> {
    const asker = this.#speaker;
    if (typeof question !== 'string' || question.trim() === '') {
      throw new TypeError(`ctx.ask(question): the question must be a non-empty sentence for the human.`);
    }
    if (this.#ran) throw new Error(`ctx.ask: the tool has already run; ask before calling next().`);
    const service = this.#chain.pauseService();
    if (service === undefined) {
      return this.deny(
        refusalReason(
          `'${this.toolName}' needs a human's approval, but this deployment cannot ask for one`,
          'Retrying will not help',
          'Tell the user the action needs approval',
        ),
        {
          code: 'NO_PAUSE_SERVICE',
          detail: `'${asker}' asked, but the chain has no pause service: give it a checkInKey`,
        },
      );
    }
    return askHuman(this, asker, question, evidence, options, service);
  }

  /** The chain's pause service, for the executor spending an approval nobody asked for again. */
  pauseService(): PauseService | undefined {
    return this.#chain.pauseService();
  }

  /** The args a human reviews: the current args, with each resolved artifact shown by its ref. */
  reviewArgs(): Readonly<ToolArgs> {
    if (this.#wanted === undefined) return this.#args;
    const review: ToolArgs = { ...this.#args };
    for (const [arg, meta] of Object.entries(this.#wanted)) review[arg] = meta.ref;
    return review;
  }

  /**
   * Before execution: refuses when the args about to run are not the ones the last approval in this
   * run covered (a middleware after the asker changed them). Undefined when nothing was approved.
   */
  approvalCheck(): Promise<void> | undefined {
    const approved = this.#approved;
    if (approved === undefined) return undefined;
    return digestOf(this.reviewArgs()).then((digest) => {
      if (digest === approved.argsDigest) return;
      throw this.refuse(
        new Refusal(
          approved.asker,
          refusalReason(
            `the arguments of '${this.toolName}' changed after a person approved them, so the approval does not cover this call`,
            'Ask for a new approval',
          ),
          { code: 'CHECKIN_MISMATCH', detail: 'the args changed after the approval was checked' },
        ),
      );
    });
  }

  /** Whether an approval was answered in this run, so the args must be checked against it before execution. */
  hasApproval(): boolean {
    return this.#approved !== undefined;
  }

  /** Receipts of approvals answered in this run. */
  get receipts(): readonly CheckInReceipt[] {
    return this.#receipts ?? NO_RECEIPTS;
  }

  /** An approval answered `asker` in this run: the human's decision, its receipt, the ledger's why. */
  recordApproval(decision: CheckInApproval, asker: string, receipt: CheckInReceipt, why: string): void {
    (this.#receipts ??= []).push(receipt);
    this.#checkIn = decision;
    this.#approved = { asker, argsDigest: receipt.argsDigest };
    this.#unanswered = undefined;
    this.#pendingWhy = why;
  }

  /**
   * An approval with changes spent by the executor because its asker no longer asked: recorded like
   * `recordApproval`, with the asker's ledger row filed at once (no middleware continues after it).
   */
  recordUnaskedApproval(
    decision: CheckInApproval,
    asker: string,
    receipt: CheckInReceipt,
    why: string,
  ): void {
    (this.#receipts ??= []).push(receipt);
    this.#checkIn = decision;
    this.#approved = { asker, argsDigest: receipt.argsDigest };
    this.#file({ gate: asker, outcome: 'allow', why, changed: false });
  }

  /** A receipt the resumed request carries for `asker` and these args, not yet used in this run. */
  takeEarlierReceipt(asker: string, argsDigest: string): CheckInReceipt | undefined {
    const earlier = this.resume?.request.receipts?.find(
      (r) => r.asker === asker && r.argsDigest === argsDigest && !this.#usedReceipts?.has(r),
    );
    if (earlier !== undefined) (this.#usedReceipts ??= new Set()).add(earlier);
    return earlier;
  }

  /** Records the pause `asker` raised (unless the call was already stopped); returns what to throw. */
  recordPause(pause: Pause, asker: string, question: string): Refusal | Pause {
    if (this.stopped !== undefined) return this.stopped;
    this.stopped = pause;
    this.#file({ gate: asker, outcome: 'ask', why: question, changed: false });
    const { request } = pause;
    this.publish('checkin.requested', () => ({ requestId: request.id, asker, expiresAt: request.expiresAt }));
    return pause;
  }

  /** Files the running middleware's decision to continue. */
  fileContinue(gate: string): void {
    const changed = this.#pendingChanged;
    const why = this.#pendingWhy;
    this.#pendingChanged = false;
    this.#pendingWhy = undefined;
    this.#file(
      why === undefined
        ? { gate, outcome: changed ? 'transform' : 'allow', changed }
        : { gate, outcome: changed ? 'transform' : 'allow', why, changed },
    );
  }

  /**
   * The next turn begins: files the previous middleware's decision to continue, then the passes of the
   * middleware the plan left out before this turn. Returns the turn's position in the plan.
   */
  beginTurn(): number {
    if (this.#turns > 0) this.#assertOpen();
    const position = this.#turns++;
    if (position > 0) this.fileContinue(this.#plan.running[position - 1]!.name);
    const passes = this.#plan.passes[position];
    if (passes !== undefined) {
      if (this.#env.quiet()) this.#filePassesQuietly(passes, position);
      else for (const pass of passes) this.#filePass(pass);
    }
    return position;
  }

  /**
   * The same passes when nobody listens: no listener can run between them, so nothing can stop the
   * call there, and the one check that could (before the first turn) stands for all of them.
   */
  #filePassesQuietly(passes: readonly FiledPass[], position: number): void {
    if (position === 0) {
      this.#speaker = passes[0]!.gate;
      this.#assertOpen();
    }
    for (const pass of passes) this.ledger.push(pass.row);
    this.enter(passes[passes.length - 1]!.gate, true);
  }

  /** A left-out middleware, as if it ran: it speaks, emits its events, continues, and its row is filed. */
  #filePass(pass: FiledPass): void {
    this.enter(pass.gate, true);
    for (const event of pass.events) this.emit(event);
    this.#assertOpen();
    this.ledger.push(pass.row);
    if (this.#env.wants('gate.decision')) this.publish('gate.decision', () => pass.row);
  }

  /**
   * Nothing continues past a recorded refusal or pause, an answered call or a cancelled one: a late
   * next() (a hung gate waking after the abort, a gate that swallowed a refusal) must not reach later
   * gates, the ledger or the tool.
   */
  #assertOpen(): void {
    if (this.stopped !== undefined) throw this.stopped;
    if (this.closed) throw new Refusal('dispatch', 'the call was already answered', { code: 'CLOSED' });
    if (this.signal.aborted) {
      throw this.refuse(
        new Refusal(
          this.#speaker,
          refusalReason(`the call to '${this.toolName}' was cancelled before it ran`),
          {
            code: 'ABORTED',
          },
        ),
      );
    }
  }

  /** The turn at `position` ended: the middleware before it speaks again. */
  endTurn(position: number): void {
    this.#ended[position] = true;
    if (position > 0) this.enter(this.#plan.running[position - 1]!.name, false);
  }

  /** Whether the middleware at `position` called next(). */
  continuedFrom(position: number): boolean {
    return this.#turns > position + 1;
  }

  /** Whether everything after the middleware at `position` has finished. */
  settledAfter(position: number): boolean {
    return this.#ended[position + 1] === true;
  }

  /** Marks `name` as the middleware now speaking; `fresh` starts its turn with no pending change. */
  enter(name: string, fresh: boolean): void {
    this.#speaker = name;
    if (fresh) {
      this.#pendingChanged = false;
      this.#pendingWhy = undefined;
    }
  }

  #file(filed: LedgerRow, code?: string, detail?: string): void {
    const rule = this.#rules?.get(filed.gate);
    const row = rule === undefined || filed.rule !== undefined ? filed : { ...filed, rule };
    this.ledger.push(row);
    if (this.#env.wants('gate.decision')) {
      // publish copies the facts, so a row without code or detail is handed over as it is.
      this.publish('gate.decision', () =>
        code === undefined && detail === undefined
          ? row
          : { ...row, ...(code !== undefined ? { code } : {}), ...(detail !== undefined ? { detail } : {}) },
      );
    }
  }

  #clearResult(): void {
    this.#hasResult = false;
    this.#result = undefined;
    this.#resultText = undefined;
  }

  /** The executor is about to call `execute`. */
  markRan(): void {
    this.#ran = true;
  }

  /** The tool refused before it did anything (see `RefusalDetail.beforeRun`). */
  markNotRun(): void {
    this.#ran = false;
  }

  recordResult(value: unknown, text: string): void {
    this.#result = value;
    this.#resultText = text;
    this.#hasResult = true;
  }

  recordFailure(name: string, message: string): ToolFailure {
    this.#error = { name, message };
    this.failure = new ToolFailure(message);
    return this.failure;
  }
}

/** The string the model reads for a result: strings as they are, anything else as JSON. */
export function resultTextOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (typeof value === 'function' || typeof value === 'symbol') {
    throw new TypeError(`a ${typeof value} is not JSON`);
  }
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError('the value has no JSON form');
  return text;
}
