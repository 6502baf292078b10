// The downstream side of one served tools/call (relay.ts's DownstreamCall) as one object with its
// methods on the prototype: a call builds no closure per relay it might make (elicitation, sampling,
// roots, log, progress), which are rare next to the calls that make none.

import type {
  AuthInfo,
  CallToolResult,
  ClientCapabilities,
  CreateMessageRequestParams,
  ElicitRequestFormParams,
  ListRootsResult,
  LoggingLevel,
  LoggingMessageNotification,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';
import type { Identity, TraceContext } from '@toolgate/core';
import { canElicitForm } from './elicit';
import type { DownstreamCall, UpstreamAsked } from './relay';

/** What a served call knows of its downstream side when it starts. */
export interface ServedDownstreamFacts {
  readonly server: Server;
  readonly extra: ServerContext;
  readonly toolName: string;
  readonly identity: Identity | undefined;
  readonly modern: NonNullable<DownstreamCall['modern']> | undefined;
  /** A 2025-11-25 request: the server can send its client requests while the call runs. */
  readonly canRequest: boolean;
  readonly logLevel: LoggingLevel | undefined;
  readonly traceContext: TraceContext | undefined;
  readonly checkInTimeoutMs: number;
  /** Told when the tool starts upstream, and when its upstream answered with a task. */
  readonly started: () => void;
  readonly upstreamTask: () => void;
  /** The client asked for a task of ours: an upstream task's questions are asked through it. */
  readonly askThroughTask?: NonNullable<DownstreamCall['askThroughTask']>;
}

export class ServedDownstream implements DownstreamCall {
  readonly toolName: string;
  declare readonly identity?: Identity;
  readonly canElicit: boolean;
  readonly canSample: boolean;
  declare readonly listRoots?: (signal: AbortSignal) => Promise<ListRootsResult>;
  declare readonly logLevel?: LoggingLevel;
  declare readonly progress?: (progress: number, total?: number, message?: string) => void;
  declare readonly traceContext?: TraceContext;
  readonly started: () => void;
  readonly upstreamTask: () => void;
  declare readonly askThroughTask?: NonNullable<DownstreamCall['askThroughTask']>;
  declare runsAsTask?: boolean;
  declare readonly authInfo?: AuthInfo;
  declare errorResult?: CallToolResult;
  declare readonly modern?: NonNullable<DownstreamCall['modern']>;
  declare asked?: UpstreamAsked;
  declare missingCapabilities?: ClientCapabilities;
  readonly #server: Server;
  readonly #extra: ServerContext;
  readonly #timeout: number;
  readonly #progressToken: string | number | undefined;

  constructor(facts: ServedDownstreamFacts) {
    const { server, extra } = facts;
    this.#server = server;
    this.#extra = extra;
    this.#timeout = facts.checkInTimeoutMs;
    this.toolName = facts.toolName;
    this.started = facts.started;
    this.upstreamTask = facts.upstreamTask;
    // Absent rather than undefined where the interface makes a field optional: readers test presence.
    const self = this as { -readonly [K in keyof ServedDownstream]: ServedDownstream[K] };
    if (facts.identity !== undefined) self.identity = facts.identity;
    if (facts.modern !== undefined) self.modern = facts.modern;
    if (facts.askThroughTask !== undefined) self.askThroughTask = facts.askThroughTask;
    // A 2026-07-28 request has no server-to-client request to carry an upstream's question.
    this.canElicit = facts.canRequest && canElicitForm(server);
    this.canSample = facts.canRequest && server.getClientCapabilities()?.sampling !== undefined;
    if (facts.canRequest && server.getClientCapabilities()?.roots !== undefined)
      self.listRoots = this.rootsOfClient;
    if (facts.logLevel !== undefined) self.logLevel = facts.logLevel;
    if (facts.traceContext !== undefined) self.traceContext = facts.traceContext;
    if (extra.http?.authInfo !== undefined) self.authInfo = extra.http.authInfo;
    this.#progressToken = extra.mcpReq._meta?.progressToken;
    if (this.#progressToken !== undefined) self.progress = this.progressToClient;
  }

  sample(params: Parameters<DownstreamCall['sample']>[0], signal: AbortSignal) {
    return this.#server.createMessage(params as CreateMessageRequestParams, {
      relatedRequestId: this.#extra.mcpReq.id,
      signal,
      timeout: this.#timeout,
    }) as ReturnType<DownstreamCall['sample']>;
  }

  elicit(params: Parameters<DownstreamCall['elicit']>[0], signal: AbortSignal) {
    return this.#server.elicitInput(params as ElicitRequestFormParams, {
      relatedRequestId: this.#extra.mcpReq.id,
      signal,
      timeout: this.#timeout,
    });
  }

  log(params: LoggingMessageNotification['params']): void {
    this.#extra.mcpReq.notify({ method: 'notifications/message', params }).catch(() => undefined);
  }

  /** `listRoots`, when the client declared roots. */
  rootsOfClient(signal: AbortSignal): Promise<ListRootsResult> {
    return this.#server.listRoots(undefined, {
      relatedRequestId: this.#extra.mcpReq.id,
      signal,
      timeout: this.#timeout,
    });
  }

  /** `progress`, when the client sent a progress token. */
  progressToClient(progress: number, total?: number, message?: string): void {
    this.#extra.mcpReq
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken: this.#progressToken!,
          progress,
          ...(total !== undefined ? { total } : {}),
          ...(message !== undefined ? { message } : {}),
        },
      })
      .catch(() => undefined);
  }
}
