// What ties a call an MCP client made to us (downstream) to the call we make upstream while it runs:
// mcpServe opens one entry per tools/call, keyed by the toolCallId it dispatches with, and an imported
// tool reads it to relay progress and elicitation, and to hand back an error result's own blocks.

import type {
  AuthInfo,
  CallToolResult,
  ClientCapabilities,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  LoggingLevel,
  ListRootsResult,
  LoggingMessageNotification,
} from '@modelcontextprotocol/server';
import type { Identity, TraceContext } from '@toolgate/core';
import type { ParkedCalls } from './parked-calls';

/** The downstream side of one call in flight. */
export interface DownstreamCall {
  /** The tool called, by the name the downstream client used. */
  readonly toolName: string;
  /** Who made the call, when known. */
  readonly identity?: Identity;
  /** Whether the downstream client can show its person a form. */
  readonly canElicit: boolean;
  /** Forwards an upstream server's elicitation to the downstream client. */
  elicit(params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult>;
  /** Whether the downstream client declared sampling. */
  readonly canSample: boolean;
  /** Forwards an upstream server's sampling request to the downstream client. */
  sample(params: CreateMessageRequest['params'], signal: AbortSignal): Promise<CreateMessageResult>;
  /** Present when the downstream client declared roots: asks it for them, as part of this call. */
  readonly listRoots?: (signal: AbortSignal) => Promise<ListRootsResult>;
  /** The least severe log level the downstream client wants; absent: it wants no log messages. */
  readonly logLevel?: LoggingLevel;
  /** Relays an upstream server's log message to the downstream client, as part of this call. */
  log(params: LoggingMessageNotification['params']): void;
  /** Present when the downstream client asked for progress (sent a progress token). */
  readonly progress?: (progress: number, total?: number, message?: string) => void;
  /** The W3C trace context the downstream request carried in `_meta`, passed on upstream. */
  readonly traceContext?: TraceContext;
  /** Called by an imported tool as it sends the call upstream: the chain decided, the tool runs. */
  readonly started?: () => void;
  /** Called by an imported tool when its upstream answered with a task it now follows. */
  readonly upstreamTask?: () => void;
  /** What the HTTP layer verified about the downstream caller (absent over stdio). */
  readonly authInfo?: AuthInfo;
  /** Set by the imported tool when the upstream answered `isError`: its blocks, redacted. */
  errorResult?: CallToolResult;
  /**
   * A 2026-07-28 call: what the client declared in its `_meta` (an upstream is told the same, and asks
   * for input in-band), and the retry for the upstream when the client answered one of its questions.
   */
  readonly modern?: {
    readonly clientCapabilities: ClientCapabilities;
    readonly retry?: UpstreamRetry;
    /** Where a 2025-era upstream's call is parked while the client answers its question. */
    readonly parking?: ParkedCalls;
  };
  /**
   * Present when the client asked for a task of ours for the call (else a 2026-07-28 call gets an
   * upstream task's questions in an input-required answer): shows an upstream task's questions
   * (those the client can answer) on our task and resolves with the client's answers (only those keys)
   * given with tasks/update. Rejects when there is no such task to ask through, on a cancel, or past
   * the task's time to live.
   */
  readonly askThroughTask?: (
    inputRequests: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ) => Promise<Readonly<Record<string, unknown>>>;
  /**
   * Set (with `askThroughTask`) when the call runs as a task of ours from its tool's start: one handed
   * out as the tool starts (the client asked for one, there is room, the tool may run as a task), or a
   * paused call's, approved. A 2025-era upstream's questions are then asked through it; unset, such a
   * call is parked between the client's rounds instead.
   */
  runsAsTask?: boolean;
  /** Set by the imported tool when the upstream answered input-required: relayed, not run as a result. */
  asked?: UpstreamAsked;
  /** Set by the imported tool when the upstream refused with -32021: the client gets the same error. */
  missingCapabilities?: ClientCapabilities;
}

/** What an upstream asked in an input-required answer. */
export interface UpstreamAsked {
  readonly inputRequests: Readonly<Record<string, unknown>>;
  /** The upstream's own opaque state, echoed back to it verbatim on the retry. */
  readonly requestState?: string;
  /** Set when an upstream task asked (SEP-2663): its id, answered with tasks/update on the retry. */
  readonly upstreamTask?: string;
  /** Set when a 2025-era upstream asked mid-call: the parked call's id, answered on the retry. */
  readonly parkedCall?: string;
}

/** What a retry sends the upstream: its own state and the client's answers to its questions. */
export interface UpstreamRetry {
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  readonly requestState?: string;
  /** The upstream task the answers are for: it is sent them and followed, no new call is made. */
  readonly upstreamTask?: string;
  /** The parked call the answer is for: its upstream request is answered, no new call is made. */
  readonly parkedCall?: string;
}

/** Per request of a 2026-07-28 client to an upstream outside tools/call (prompts/get, resources/read). */
export interface UpstreamRelay {
  readonly clientCapabilities: ClientCapabilities;
  readonly retry?: UpstreamRetry;
}

const open = new Map<string, DownstreamCall>();

export function openDownstream(toolCallId: string, call: DownstreamCall): () => void {
  open.set(toolCallId, call);
  return () => {
    open.delete(toolCallId);
  };
}

export function downstreamOf(toolCallId: string): DownstreamCall | undefined {
  return open.get(toolCallId);
}

/** Thrown by an upstream's prompts/get or resources/read for a 2026-07-28 caller: what it asked, to relay. */
export class UpstreamAskedError extends Error {
  override readonly name = 'UpstreamAskedError';
  constructor(readonly asked: UpstreamAsked) {
    super('the upstream asked the client for input');
  }
}
