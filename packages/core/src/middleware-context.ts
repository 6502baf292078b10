// What a middleware reads and may call: the one context object of a call, as a type. The runtime
// behind it is CallContext (context.ts).

import type { CheckInApproval, CheckInComponent, CheckInDecision } from './check-in';
import type { Credential } from './credential';
import type { GateEvent } from './events';
import type { Identity } from './identity';
import type { ArtifactMeta } from './ports';
import type { RefusalDetail } from './refusal';
import type { Tool, ToolArgs } from './tool';

/** Per-call bag for middleware. Augment it to type your own keys: `declare module '@toolgate/core' { interface ToolState { … } }`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ToolState {}

export interface AskOptions {
  readonly component?: CheckInComponent;
}

/** A middleware's demand that a person approve this call before it runs (`ctx.requireCheckIn`). */
export interface CheckInRequirement {
  /** The middleware that required it. */
  readonly gate: string;
  /** Why, in words for the person who approves (never an argument value). */
  readonly why: string;
}

/** One object per call; the only thing a middleware reads. */
export interface ToolMiddlewareContext<TArgs = ToolArgs> {
  readonly toolName: string;
  /** The MCP server the tool came from; absent for our own tools. */
  readonly toolSource?: string;
  readonly toolCallId: string;
  /** The tool's declarations. */
  readonly tool: Tool;
  readonly identity?: Identity;
  readonly signal: AbortSignal;
  readonly state: ToolState & Record<string, unknown>;
  /** True when this run continues an approved check-in. */
  readonly resumed: boolean;
  readonly chainId: string;

  /** The current args, read-only. Change them with `setArgs`. */
  readonly args: Readonly<TArgs>;

  readonly credential?: Credential | undefined;
  /** Metadata of each resolved artifact, by argument name. */
  readonly wanted?: Readonly<Record<string, ArtifactMeta>> | undefined;
  /** The human's decision, once a check-in has been answered. */
  readonly checkIn?: CheckInDecision | undefined;
  /** Check-ins middleware required so far in this run (`requireCheckIn`), in order; empty when none. */
  readonly checkInsRequired: readonly CheckInRequirement[];

  /** Whether the tool's execute has started. */
  readonly ran: boolean;
  readonly result?: unknown;
  readonly error?: { readonly name: string; readonly message: string } | undefined;
  /** The string the model will read: strings as they are, anything else as JSON. Computed once. */
  readonly resultText?: string | undefined;

  /**
   * Refuses the call: nothing after it runs. `reason` is the sentence the model reads; `detail` is
   * `{ code?, retryable?, detail?, mentionsRun? }`, or a plain string: the operator detail alone.
   */
  deny(reason: string, detail?: RefusalDetail | string): never;
  /** Pauses the call for a human; on an approved resume the same ask returns the approval. */
  ask(question: string, evidence?: unknown, options?: AskOptions): Promise<CheckInApproval>;
  /**
   * Requires a person's approval before the tool runs, whatever the tool declares: the check-in gate
   * (standing later, after every transform) asks. A call that reaches its tool with the requirement
   * unanswered is refused. Before execution only.
   */
  requireCheckIn(why: string): void;
  /** Replaces the args before the tool runs; `why` goes in the ledger. */
  setArgs(value: TArgs, why: string): void;
  /** Replaces the result after the tool ran; `why` goes in the ledger. */
  setResult(value: unknown, why: string): void;
  /**
   * Explains a pass-through in the ledger (e.g. "no checker"). After the tool ran (in an after-half) it
   * files an `allow` row of its own: a finding about the result that leaves it as it is.
   */
  note(why: string): void;
  /**
   * Names the rule of this middleware's rule set that decided the call: every ledger row it files from
   * now on carries it as `rule`, so audit and the gateway read a field instead of parsing `why`.
   */
  decidedBy(rule: string): void;
  /** Hands the resolved credential to the tool. Before execution only. */
  provideCredential(credential: Credential): void;
  /** Records a resolved artifact's metadata under its argument name. Before execution only. */
  provideWanted(arg: string, meta: ArtifactMeta): void;
  /** The dispatcher's clock, in milliseconds since the epoch: judge expiry with it, not the wall clock. */
  now(): number;
  /** Emits a gate event; the core adds the call's identity fields. */
  emit(event: GateEvent): void;
}
