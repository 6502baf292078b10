// A real Tool that records every call it receives, for asserting what ran and with what.

import {
  assertTool,
  type ArtifactMeta,
  type CheckInComponent,
  type CheckInDecision,
  type Credential,
  type CredentialNeed,
  type Identity,
  type ResultCeiling,
  type Tool,
  type ToolArgs,
  type ToolMiddlewareContext,
} from '@toolgate/core';

/** What one execution saw: the args that ran and the facts the gates left on the context. */
export interface MockToolCall {
  /** The args as they reached `execute` (after every transform: defaults, resolved artifacts). */
  readonly args: Readonly<ToolArgs>;
  readonly toolCallId: string;
  readonly toolSource?: string;
  readonly identity?: Identity;
  readonly resumed: boolean;
  readonly chainId: string;
  /** The credential the gate provided; its secret is readable only through `reveal()`. */
  readonly credential?: Credential;
  readonly wanted?: Readonly<Record<string, ArtifactMeta>>;
  readonly checkIn?: CheckInDecision;
  /** The call's signal, to check it follows the caller's. */
  readonly signal: AbortSignal;
}

export interface MockToolOptions<TResult = unknown> {
  readonly name: string;
  readonly description?: string;
  /**
   * JSON Schema (or TypeBox). Default: an open object; with `wants`, each wanted arg is declared a
   * required string so the declaration is valid.
   */
  readonly inputSchema?: object;
  /** What every call returns. Default `'ok'`. Ignored when `execute` is given. */
  readonly result?: TResult;
  /** Computes the result (or throws). Runs after the call is recorded. */
  readonly execute?: (args: Readonly<ToolArgs>, ctx: ToolMiddlewareContext) => TResult | Promise<TResult>;
  readonly capabilities?: readonly string[];
  readonly checkIn?:
    'always' | ((args: Readonly<ToolArgs>, ctx: ToolMiddlewareContext) => boolean | Promise<boolean>);
  readonly checkInComponent?: CheckInComponent;
  readonly needs?: CredentialNeed;
  readonly resultCeiling?: ResultCeiling;
  readonly wants?: Readonly<Record<string, string>>;
  /** Simulates a tool imported from this MCP server. */
  readonly source?: string;
}

export interface MockTool extends Tool {
  /** Every execution, in order. */
  readonly calls: readonly MockToolCall[];
  readonly callCount: number;
  /** The latest execution, if any. */
  readonly lastCall: MockToolCall | undefined;
  /** Forgets recorded calls. */
  reset(): void;
}

function defaultSchema(wants: Readonly<Record<string, string>> | undefined): Record<string, unknown> {
  if (wants === undefined || Object.keys(wants).length === 0)
    return { type: 'object', additionalProperties: true };
  const wanted = Object.keys(wants);
  return {
    type: 'object',
    properties: Object.fromEntries(wanted.map((arg) => [arg, { type: 'string' }])),
    required: wanted,
    additionalProperties: true,
  };
}

function snapshot(args: Readonly<ToolArgs>): Readonly<ToolArgs> {
  try {
    return structuredClone(args);
  } catch {
    return { ...args };
  }
}

/**
 * A tool for tests: a real Tool (checked by `assertTool`) that records each call.
 *
 * @example
 * const refund = mockTool({ name: 'refund', result: { ok: true }, capabilities: ['payments'], checkIn: 'always' });
 * // …dispatch…
 * expect(refund.callCount).toBe(1);
 * expect(refund.lastCall?.checkIn).toMatchObject({ approved: true });
 */
export function mockTool<TResult = unknown>(options: MockToolOptions<TResult>): MockTool {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('mockTool: expected { name, result | execute, …declarations }.');
  }
  const { name, description, inputSchema, result, execute, source, ...declarations } = options;
  if (execute !== undefined && typeof execute !== 'function')
    throw new TypeError(`mockTool '${name}': execute must be a function.`);
  if (execute !== undefined && 'result' in options) {
    throw new TypeError(`mockTool '${name}': give either 'result' or 'execute', not both.`);
  }
  const calls: MockToolCall[] = [];
  const answer = 'result' in options ? result : 'ok';
  const tool = {
    schema: {
      name,
      description: description ?? `mock tool '${name}'`,
      inputSchema: (inputSchema ?? defaultSchema(declarations.wants)) as Record<string, unknown>,
    },
    async execute(args: ToolArgs, ctx: ToolMiddlewareContext): Promise<unknown> {
      calls.push({
        args: snapshot(args),
        toolCallId: ctx.toolCallId,
        ...(ctx.toolSource !== undefined ? { toolSource: ctx.toolSource } : {}),
        ...(ctx.identity !== undefined ? { identity: ctx.identity } : {}),
        resumed: ctx.resumed,
        chainId: ctx.chainId,
        ...(ctx.credential !== undefined ? { credential: ctx.credential } : {}),
        ...(ctx.wanted !== undefined ? { wanted: ctx.wanted } : {}),
        ...(ctx.checkIn !== undefined ? { checkIn: ctx.checkIn } : {}),
        signal: ctx.signal,
      });
      return execute === undefined ? answer : execute(args, ctx);
    },
    ...Object.fromEntries(Object.entries(declarations).filter(([, value]) => value !== undefined)),
    ...(source !== undefined ? { source } : {}),
    get calls(): readonly MockToolCall[] {
      return calls;
    },
    get callCount(): number {
      return calls.length;
    },
    get lastCall(): MockToolCall | undefined {
      return calls[calls.length - 1];
    },
    reset(): void {
      calls.length = 0;
    },
  };
  assertTool(tool, { allowSource: source !== undefined });
  return tool as unknown as MockTool;
}
