// The canonical chain: every gate, in CANONICAL_ORDER, configured from one options object.

import {
  createChain,
  POLICY_ANCHOR,
  type ArtifactStore,
  type Chain,
  type CheckInStore,
  type CredentialProvider,
  type Middleware,
  type PermissionChecker,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { capabilitiesGate } from './capabilities';
import { checkInGate } from './check-in';
import { credentialsGate } from './credentials';
import { limitsGate, type LimitsGateOptions } from './limits';
import { permissionGate } from './permission';
import { resultCeilingGate } from './result-ceiling';
import { validateArgsGate } from './validate-args';
import type { SchemaValidator } from './validator';
import { wantsGate } from './wants';

export interface CanonicalChainOptions {
  /** Permission and capabilities gates; none → allow, and the ledger says "no checker". */
  readonly permissions?: PermissionChecker;
  /** The wants gate's store. */
  readonly artifacts?: ArtifactStore;
  /** The pause service's store; in-memory by default. */
  readonly checkIns?: CheckInStore;
  /** The pause service's HMAC key. Without it, tools that declare `checkIn` are refused at dispatcher build. */
  readonly checkInKey?: string | Uint8Array;
  /** Check-in request lifetime; default 15 minutes. */
  readonly checkInTtlMs?: number;
  /** Builds the evidence pack for a check-in. */
  readonly evidence?: (ctx: ToolMiddlewareContext) => unknown;
  readonly credentials?: CredentialProvider;
  /** The ceiling for tools that declare none. */
  readonly defaultMaxChars?: number;
  /** The ceiling on decoded bytes of binary result blocks (MCP images, audio, blobs) for tools that declare none. */
  readonly defaultMaxBytes?: number;
  /** Per-gate deadline for checkers, providers and stores; default 5000 ms. */
  readonly deadlineMs?: number;
  /** Default ajv; pass an eval-free validator on edge workers. */
  readonly validator?: SchemaValidator;
  /**
   * Rates and budgets: adds the limits gate between wants and check-in. Its store calls share
   * `deadlineMs` unless the options set their own.
   */
  readonly limits?: LimitsGateOptions;
  /**
   * A policy gate (e.g. `policyGate(rules)` from `@toolgate/policy`): stands right after validate-args,
   * so its rules read validated args, and before wants, limits and check-in.
   */
  readonly policy?: Middleware;
}

/**
 * Builds the chain in canonical order: permission → capabilities → (your middleware, via `use`) → validate-args →
 * (policy, when given) → wants → (limits, when `limits` is given) → check-in → credentials → result-ceiling → execute.
 *
 * @example
 * const chain = canonicalChain({ permissions, artifacts: inMemoryArtifacts(), checkInKey: process.env.CHECKIN_KEY });
 */
export function canonicalChain(options: CanonicalChainOptions = {}): Chain {
  const deadline = options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs };
  if (options.checkIns !== undefined && options.checkInKey === undefined) {
    throw new TypeError(
      'canonicalChain: checkIns was given without checkInKey; a check-in store needs the key that signs its requests.',
    );
  }
  const gates = [
    permissionGate(options.permissions, deadline),
    capabilitiesGate(options.permissions, deadline),
    validateArgsGate(options.validator === undefined ? {} : { validator: options.validator }),
    ...(options.policy !== undefined ? [options.policy] : []),
    wantsGate({ ...(options.artifacts !== undefined ? { store: options.artifacts } : {}), ...deadline }),
    // Optional, so a chain without limits keeps CANONICAL_ORDER exactly.
    ...(options.limits !== undefined ? [limitsGate({ ...deadline, ...options.limits })] : []),
    checkInGate({
      ...(options.evidence !== undefined ? { evidence: options.evidence } : {}),
      ...(options.artifacts !== undefined ? { artifacts: options.artifacts } : {}),
      ...deadline,
    }),
    credentialsGate(options.credentials, deadline),
    resultCeilingGate({
      ...(options.defaultMaxChars !== undefined ? { defaultMaxChars: options.defaultMaxChars } : {}),
      ...(options.defaultMaxBytes !== undefined ? { defaultMaxBytes: options.defaultMaxBytes } : {}),
    }),
  ];
  const checkIns =
    options.checkInKey === undefined
      ? undefined
      : {
          key: options.checkInKey,
          ...(options.checkIns !== undefined ? { store: options.checkIns } : {}),
          ...(options.checkInTtlMs !== undefined ? { ttlMs: options.checkInTtlMs } : {}),
          ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
        };
  return createChain(gates, { ...(checkIns !== undefined ? { checkIns } : {}), policyAnchor: POLICY_ANCHOR });
}
