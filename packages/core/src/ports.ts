// The interfaces a deployment plugs in: permission checker, credential provider and stores.
// Implementations live in @toolgate/middleware (in-memory) and @toolgate/store-sqlite (durable).

import type { ArtifactScope, Identity } from './identity';

/** A checker's answer. Anything else a checker returns is treated as a denial. */
export type Decision = { readonly allow: true } | { readonly allow: false; readonly reason: string };

/** What the permission and capabilities gates ask a checker. */
export interface PermissionRequest {
  /** `'tool_call'` for the permission gate, the capability name for the capabilities gate. */
  readonly capability: string;
  /** The tool name. */
  readonly target: string;
  readonly toolSource?: string;
  readonly identity?: Identity;
  readonly args: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
}

export interface PermissionChecker {
  check(request: PermissionRequest): Decision | Promise<Decision>;
  /** Capabilities this checker decides; a declared capability outside this list is not asked about. */
  readonly governs?: readonly string[];
}

/** A tool's declaration of the credential it needs. */
export interface CredentialNeed {
  readonly kind: string;
  readonly service: string;
  readonly scopes?: readonly string[];
}

/** What a provider returns: plain data, wrapped by the credentials gate into a `Credential`. */
export interface ResolvedCredential {
  readonly kind: string;
  readonly value: string | Readonly<Record<string, string>>;
  readonly expiresAt?: string | number;
}

export interface CredentialRequestContext {
  readonly identity?: Identity;
  readonly toolName: string;
  readonly toolSource?: string;
  readonly signal: AbortSignal;
}

export interface CredentialProvider {
  resolve(
    need: CredentialNeed,
    context: CredentialRequestContext,
  ): ResolvedCredential | Promise<ResolvedCredential>;
}

/** What an artifact store knows about an artifact, without its data. */
export interface ArtifactMeta {
  readonly ref: string;
  readonly kind: string;
  readonly createdAt: string;
  readonly expiresAt?: string;
  readonly meta?: Readonly<Record<string, unknown>>;
}

export interface ArtifactInput {
  readonly kind: string;
  readonly data: unknown;
  readonly meta?: Readonly<Record<string, unknown>>;
  readonly ttlMs?: number;
}

export interface StoredArtifact {
  readonly meta: ArtifactMeta;
  readonly data: unknown;
}

/**
 * Artifacts keyed by scope. `get` in another scope answers `undefined`, exactly as for an unknown ref,
 * so a caller cannot learn that another tenant's ref exists.
 */
export interface ArtifactStore {
  put(scope: ArtifactScope, artifact: ArtifactInput): Promise<string>;
  get(scope: ArtifactScope, ref: string): Promise<StoredArtifact | undefined>;
  /** Live artifacts of `kind` in `scope`, newest first, at most `limit`. */
  list(scope: ArtifactScope, kind: string, limit?: number): Promise<ArtifactMeta[]>;
}
