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

/** What a pin is of: one tool's definition, or what identifies the server itself. */
export type PinKind = 'tool' | 'server';

/** A definition as seen from a server: its digest, and the definition itself for a person to diff. */
export interface PinObservation {
  /** The MCP client's name: whose server it is. */
  readonly source: string;
  readonly kind: PinKind;
  /** The tool's name as the server lists it; `''` for the server itself. */
  readonly name: string;
  /** Lowercase hex SHA-256 of the definition's canonical JSON. */
  readonly digest: string;
  readonly definition: Readonly<Record<string, unknown>>;
}

/** A pinned definition, and the different one a server serves now, if it does. */
export interface PinRecord extends PinObservation {
  /** ISO 8601: when this definition was pinned (first seen, or accepted). */
  readonly pinnedAt: string;
  /** The definition served instead of the pinned one, awaiting acceptance. */
  readonly changed?: {
    readonly digest: string;
    readonly definition: Readonly<Record<string, unknown>>;
    readonly seenAt: string;
  };
}

export interface PinFilter {
  readonly source?: string;
  readonly kind?: PinKind;
  /** Only records whose served definition differs from the pinned one. */
  readonly changed?: boolean;
}

/**
 * Where definitions are pinned. `observe` pins on first sight and records any later difference;
 * nothing but `accept` ever changes a pinned digest. A store shared by several processes must keep
 * `observe` and `accept` atomic across them.
 */
export interface PinStore {
  /**
   * Pins `seen` when nothing is pinned under its source, kind and name; otherwise records it as the
   * changed definition when its digest differs from the pinned one, and clears the change when it
   * matches again. Answers the record as it stands after, and whether this call pinned it.
   */
  observe(
    seen: PinObservation,
    at: string,
  ): Promise<{ readonly record: PinRecord; readonly pinned: boolean }>;
  get(source: string, kind: PinKind, name: string): Promise<PinRecord | undefined>;
  /**
   * Makes the changed definition whose digest is `digest` the pinned one. False when no change with
   * that digest is recorded (nothing changed, or it changed again since it was reviewed).
   */
  accept(source: string, kind: PinKind, name: string, digest: string, at: string): Promise<boolean>;
  /** Records by source, kind and name. */
  list(filter?: PinFilter): Promise<PinRecord[]>;
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

/** One entry of an `AuditJournal`: a text the log wrote (its records' fields), and the number the journal gave it. */
export interface AuditJournalEntry {
  readonly id: number;
  readonly text: string;
}

/**
 * A local file that holds a process's audit records between their commit window and the store's
 * commit, so the store takes them in fewer, larger commits and a process crash still loses none
 * that reached it. Entries hold a record's fields (digests, never values), not yet sealed: the store's
 * commit seals them, so any number of processes may share the store. Every method is synchronous:
 * an entry `write` returned survives the process.
 */
export interface AuditJournal {
  /** Entries a process that stopped before the store took them left behind, oldest first. */
  left(): readonly AuditJournalEntry[];
  /** Keeps `texts` in order; returns the id of the last (ids grow). */
  write(texts: readonly string[]): number;
  /** The store holds every entry up to and including `id`: forget them. */
  release(id: number): void;
  close(): void;
}
