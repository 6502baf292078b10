// The SDK's client with one result validator per wire era and method rather than one per request.
// `Client.request()` without a schema, which `callTool` uses, builds its validator each time by
// probing the era's result schema with `undefined`: a zod parse that fails and formats its error
// message, on every upstream call (the heaviest single frame of the gateway's CPU per call, #35).
// That validator depends only on the era's codec and the method, so one built per pair and kept
// validates exactly as the SDK's own would.

import { Client } from '@modelcontextprotocol/client';
import type { RequestOptions, StandardSchemaV1 } from '@modelcontextprotocol/client';

type ValidateOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: 'not-in-era' }
  | { readonly ok: false; readonly reason: 'invalid'; readonly message: string };

/** The part of the SDK's wire codec a result validator uses. */
interface ResultCodec {
  validateResult(method: string, raw: unknown): ValidateOutcome;
}

// Keyed by the codec object: the SDK has one per wire era, and a new SDK's codecs get their own entries.
const validatorsByCodec = new WeakMap<object, Map<string, StandardSchemaV1 | undefined>>();

/** The SDK's `codecResultValidator(codec, method)`, built once; undefined where the era has no such method. */
function resultValidator(codec: ResultCodec, method: string): StandardSchemaV1 | undefined {
  let byMethod = validatorsByCodec.get(codec);
  if (byMethod === undefined) validatorsByCodec.set(codec, (byMethod = new Map()));
  if (byMethod.has(method)) return byMethod.get(method);
  const probe = codec.validateResult(method, undefined);
  const validator: StandardSchemaV1 | undefined =
    !probe.ok && probe.reason === 'not-in-era'
      ? undefined
      : {
          '~standard': {
            version: 1,
            vendor: 'mcp-wire-codec',
            validate(value: unknown) {
              const outcome = codec.validateResult(method, value);
              if (outcome.ok) return { value: outcome.value };
              const message = outcome.reason === 'invalid' ? outcome.message : `not-in-era: ${method}`;
              return { issues: [{ message }] };
            },
          },
        };
  byMethod.set(method, validator);
  return validator;
}

const isSchema = (value: unknown): value is StandardSchemaV1 =>
  typeof value === 'object' && value !== null && '~standard' in value;

/** Methods whose codec is the negotiated one in every state of the connection (none is bootstrap-pinned). */
const CACHED_METHODS: ReadonlySet<string> = new Set(['tools/call']);

const sdkRequest = Client.prototype.request as (this: Client, ...args: unknown[]) => Promise<never>;

export class UpstreamClient extends Client {
  // One signature for both of the SDK's overloads: a spec method with options, or any method with a schema.
  override request(
    request: { method: string; params?: Record<string, unknown> },
    schemaOrOptions?: StandardSchemaV1 | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<never> {
    if (isSchema(schemaOrOptions) || !CACHED_METHODS.has(request.method))
      return sdkRequest.call(this, request, schemaOrOptions, maybeOptions);
    const validator = resultValidator(this._wireCodec() as ResultCodec, request.method);
    // Not in this era: the SDK's own path refuses it with its own error.
    if (validator === undefined) return sdkRequest.call(this, request, schemaOrOptions);
    return sdkRequest.call(this, request, validator, schemaOrOptions);
  }
}
