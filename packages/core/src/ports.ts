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

/**
 * One entry of the audit log: facts and keyed digests, never a value. `hash` is SHA-256 (hex) of the
 * canonical JSON of every other field but `signature`, so it covers `prevHash`, the hash of the entry
 * before it; `signature` is Ed25519 (hex) over the 32 bytes of `hash`. Built by `@toolgate/audit`.
 */
export interface AuditRecord {
  /** 1 for the first record, then one more per record: no gaps. */
  readonly seq: number;
  /** ISO 8601, when the outcome or action happened. */
  readonly at: string;
  readonly tenant?: string;
  readonly principal?: string;
  readonly tool?: string;
  readonly source?: string;
  readonly chainId?: string;
  /** The policy rule that decided, when a `policy` gate named one. */
  readonly rule?: string;
  /** An outcome (`result`, `refused`, `paused`, `failed`) or an action (`pin.accepted`, …). */
  readonly kind: string;
  readonly gate?: string;
  readonly code?: string;
  readonly ran: boolean;
  readonly checkInId?: string;
  readonly approver?: string;
  readonly argsDigest?: string;
  readonly resultDigest?: string;
  /** The previous record's `hash`; 64 zeros for the first. */
  readonly prevHash: string;
  readonly hash: string;
  readonly signature: string;
}

/** The last record of an audit log: where the next one continues. */
export interface AuditHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * Seals the next records of the log once the store knows its head (`undefined` for an empty log):
 * they continue it, `seq` after `seq` and `prevHash` after `hash`.
 */
export type AuditSeal = (head: AuditHead | undefined) => Promise<readonly AuditRecord[]>;

/**
 * Where the audit log lives. `append` is the only write: the store finds its head, calls `seal` and
 * stores what it returns, all of it or nothing, and no other append (in this process or any other
 * sharing the store) may take the same head, so the log stays one chain. Records are never changed
 * or deleted through this interface.
 */
export interface AuditStore {
  append(seal: AuditSeal): Promise<readonly AuditRecord[]>;
  /** The last record's seq and hash, or `undefined` while the log is empty. */
  head(): Promise<AuditHead | undefined>;
  /** Up to `limit` records with `seq > after`, in seq order. */
  read(after: number, limit: number): Promise<AuditRecord[]>;
  /** Answers only when an append can be taken now (the store is reachable and writable enough to try). */
  ready?(): Promise<void>;
}
