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
import { commandGuard, type CommandGuardOptions } from './command-guard';
import { credentialsGate } from './credentials';
import { crossServerGuard, type CrossServerGuardOptions } from './cross-server-guard';
import { egressGuard, type EgressGuardOptions } from './egress-guard';
import { limitsGate, type LimitsGateOptions } from './limits';
import { pathGuard, type PathGuardOptions } from './path-guard';
import { permissionGate } from './permission';
import { resultCeilingGate } from './result-ceiling';
import { resultScreen, type ResultScreenOptions } from './result-screen';
import { secretGuard, type SecretGuardOptions } from './secret-guard';
import { validateArgsGate } from './validate-args';
import type { SchemaValidator } from './validator';
import { wantsGate } from './wants';

/**
 * The guards `canonicalChain` adds. Given at all, the guards that act on tool declarations (egress,
 * paths, commands) are on, each only for the tools that declare or are configured (`false` leaves one
 * out); the secret, cross-server and result guards are on when their key is given.
 */
export interface CanonicalGuards {
  readonly egress?: EgressGuardOptions | false;
  readonly paths?: PathGuardOptions | false;
  readonly commands?: CommandGuardOptions | false;
  readonly secrets?: SecretGuardOptions;
  readonly crossServer?: CrossServerGuardOptions;
  readonly results?: ResultScreenOptions;
}

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
  /**
   * Deterministic defenses against known MCP attacks (docs/guards.md): the argument guards stand after
   * wants (and limits) and before check-in, so nobody is asked about a call a guard refuses; the
   * result screen stands just outside the result ceiling.
   */
  readonly guards?: CanonicalGuards;
}

function guardsOf(
  guards: CanonicalGuards | undefined,
  deadline: { deadlineMs?: number },
): { args: Middleware[]; results: Middleware[] } {
  if (guards === undefined) return { args: [], results: [] };
  const args: Middleware[] = [];
  if (guards.egress !== false) args.push(egressGuard({ ...deadline, ...guards.egress }));
  if (guards.paths !== false) args.push(pathGuard(guards.paths));
  if (guards.commands !== false) args.push(commandGuard(guards.commands));
  if (guards.crossServer !== undefined) args.push(crossServerGuard(guards.crossServer));
  // Innermost of the argument guards: its after-half redacts a result before the others read it.
  if (guards.secrets !== undefined) args.push(secretGuard(guards.secrets));
  return { args, results: guards.results === undefined ? [] : [resultScreen(guards.results)] };
}

/**
 * Builds the chain in canonical order: permission → capabilities → (your middleware, via `use`) → validate-args →
 * (policy, when given) → wants → (limits, when `limits` is given) → (argument guards, when `guards` is given) →
 * check-in → credentials → (result screen, when `guards.results` is given) → result-ceiling → execute.
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
  const guards = guardsOf(options.guards, deadline);
  const gates = [
    permissionGate(options.permissions, deadline),
    capabilitiesGate(options.permissions, deadline),
    validateArgsGate(options.validator === undefined ? {} : { validator: options.validator }),
    ...(options.policy !== undefined ? [options.policy] : []),
    wantsGate({ ...(options.artifacts !== undefined ? { store: options.artifacts } : {}), ...deadline }),
    // Optional, so a chain without limits keeps CANONICAL_ORDER exactly.
    ...(options.limits !== undefined ? [limitsGate({ ...deadline, ...options.limits })] : []),
    ...guards.args,
    checkInGate({
      ...(options.evidence !== undefined ? { evidence: options.evidence } : {}),
      ...(options.artifacts !== undefined ? { artifacts: options.artifacts } : {}),
      ...deadline,
    }),
    credentialsGate(options.credentials, deadline),
    ...guards.results,
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
