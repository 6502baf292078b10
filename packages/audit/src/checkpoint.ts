// Signed checkpoints: the log's head (seq, hash) at a time, signed with the log's key and kept outside
// the store. A log cut short, wiped or rolled back together with its head row still verifies on its
// own; against the newest checkpoint it ends too early or disagrees, and verify says so.

import { canonicalJson, type AuditHead } from '@toolgate/core';
import { AuditConfigError, optionError } from './errors';
import { bytesOfHex, webCryptoSigner, type RecordSigner } from './record';

/** The head of a log at a time, signed (Ed25519, hex) over `checkpointBytes`. */
export interface AuditCheckpoint {
  readonly seq: number;
  readonly hash: string;
  /** ISO 8601: when the checkpoint was made. */
  readonly at: string;
  readonly signature: string;
}

/** What a checkpoint's signature covers: a label, so no record hash can pass for a checkpoint. */
const LABEL = 'toolgate.audit.checkpoint.v1';
const encoder = new TextEncoder();
const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

function checkpointBytes(head: AuditHead, at: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(canonicalJson({ type: LABEL, seq: head.seq, hash: head.hash, at }));
}

/** Signs `head` as of `at` with the log's Ed25519 key (a CryptoKey, or the log's own signer). */
export async function signCheckpoint(
  head: AuditHead,
  at: string,
  signingKey: CryptoKey | RecordSigner,
): Promise<AuditCheckpoint> {
  const sign = typeof signingKey === 'function' ? signingKey : webCryptoSigner(signingKey);
  const signature = await sign(checkpointBytes(head, at));
  return { seq: head.seq, hash: head.hash, at, signature };
}

/** Whether `checkpoint` is signed by `publicKey`. */
export async function checkpointHolds(checkpoint: AuditCheckpoint, publicKey: CryptoKey): Promise<boolean> {
  try {
    return await globalThis.crypto.subtle.verify(
      'Ed25519',
      publicKey,
      bytesOfHex(checkpoint.signature),
      checkpointBytes(checkpoint, checkpoint.at),
    );
  } catch {
    return false;
  }
}

/**
 * A checkpoint as published (its JSON text, or the parsed object), checked for shape. Text may hold
 * several checkpoints, one JSON object a line (a file appended to): the one with the highest seq counts.
 */
export function parseCheckpoint(source: unknown): AuditCheckpoint {
  if (typeof source === 'string') {
    const lines = source.split('\n').filter((line) => line.trim() !== '');
    if (lines.length === 0)
      throw new AuditConfigError({ subject: 'audit checkpoint', problem: 'the text is empty' });
    let newest: AuditCheckpoint | undefined;
    lines.forEach((line, i) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new AuditConfigError({ subject: 'audit checkpoint', problem: `line ${i + 1} is not JSON` });
      }
      const checkpoint = parseCheckpoint(value);
      if (newest === undefined || checkpoint.seq > newest.seq) newest = checkpoint;
    });
    return newest!;
  }
  const c = source as Partial<AuditCheckpoint> | null;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) {
    throw new AuditConfigError({
      subject: 'audit checkpoint',
      problem: 'expected an object { seq, hash, at, signature }',
    });
  }
  if (!Number.isSafeInteger(c.seq) || c.seq! < 1)
    throw optionError('audit checkpoint', 'seq', 'must be a positive integer');
  if (typeof c.hash !== 'string' || !HEX64.test(c.hash))
    throw optionError('audit checkpoint', 'hash', 'must be a SHA-256 hex digest');
  if (typeof c.at !== 'string' || Number.isNaN(Date.parse(c.at)))
    throw optionError('audit checkpoint', 'at', 'must be an ISO 8601 time');
  if (typeof c.signature !== 'string' || !HEX128.test(c.signature))
    throw optionError('audit checkpoint', 'signature', 'must be an Ed25519 hex signature');
  return { seq: c.seq!, hash: c.hash, at: c.at, signature: c.signature };
}

/** `SEQ:HASH`, as `toolgate audit verify` prints a head and takes one back with `--head`. */
export function parseAuditHead(text: string): AuditHead {
  const match = /^([1-9][0-9]{0,15}):([0-9a-f]{64})$/.exec(text.trim());
  const seq = match === null ? NaN : Number(match[1]);
  if (match === null || !Number.isSafeInteger(seq)) {
    throw new AuditConfigError({
      subject: 'audit head',
      problem: 'expected SEQ:HASH, e.g. 42:<64 hex digits>, as `toolgate audit verify` prints it',
    });
  }
  return { seq, hash: match[2]! };
}

/** When a log publishes checkpoints: after every `every` records, and `intervalMs` after a record that is not yet covered. */
export interface AuditCheckpointOptions {
  /** Where a checkpoint goes (a file outside the store, a webhook). A rejection is retried with the next one. */
  readonly publish: (checkpoint: AuditCheckpoint) => Promise<void>;
  /** Records between checkpoints; default 100. */
  readonly every?: number;
  /** Milliseconds a stored record may wait for a checkpoint; default 10,000. */
  readonly intervalMs?: number;
  /** Told when a checkpoint could not be published (its class only, never a value). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Publishes checkpoints of a log as its records are stored: one in flight at a time, the newest head
 * wins, a failed publish retried by the next record or tick.
 */
export class CheckpointPublisher {
  readonly #options: Required<Omit<AuditCheckpointOptions, 'onError'>> &
    Pick<AuditCheckpointOptions, 'onError'>;
  readonly #sign: (head: AuditHead, at: string) => Promise<AuditCheckpoint>;
  readonly #clock: () => number;
  #head: AuditHead | undefined;
  #published = 0;
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    options: AuditCheckpointOptions,
    sign: (head: AuditHead, at: string) => Promise<AuditCheckpoint>,
    clock: () => number,
  ) {
    this.#options = { every: 100, intervalMs: 10_000, ...options };
    this.#sign = sign;
    this.#clock = clock;
  }

  /** The newest head stored; publishes when `every` records wait, else arms the timer. */
  stored(head: AuditHead): void {
    if (this.#head !== undefined && head.seq <= this.#head.seq) return;
    this.#head = head;
    if (head.seq - this.#published >= this.#options.every) void this.publishNow();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.publishNow();
      }, this.#options.intervalMs);
      // A pending checkpoint never keeps a process alive; close() publishes the last one.
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** Publishes the newest head when a checkpoint does not cover it yet; resolves when done (or failed). */
  async publishNow(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
    const head = this.#head;
    if (head === undefined || head.seq <= this.#published) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#running = (async () => {
      try {
        await this.#options.publish(await this.#sign(head, new Date(this.#clock()).toISOString()));
        this.#published = Math.max(this.#published, head.seq);
      } catch (error) {
        this.#options.onError?.(error);
      } finally {
        this.#running = undefined;
      }
    })();
    await this.#running;
  }

  /** The seq the last published checkpoint covers (0: none yet). */
  get published(): number {
    return this.#published;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** Checks a checkpoint's options where the log is built. */
export function checkedCheckpointOptions(options: unknown): AuditCheckpointOptions | undefined {
  if (options === undefined) return undefined;
  const o = options as Partial<AuditCheckpointOptions> | null;
  if (typeof o !== 'object' || o === null || typeof o.publish !== 'function') {
    throw optionError('auditLog', 'checkpoints', 'must be { publish(checkpoint), every?, intervalMs? }');
  }
  if (o.every !== undefined && !(Number.isSafeInteger(o.every) && o.every >= 1))
    throw optionError('auditLog', 'checkpoints.every', 'must be a positive integer of records');
  if (o.intervalMs !== undefined && !(Number.isSafeInteger(o.intervalMs) && o.intervalMs >= 1))
    throw optionError('auditLog', 'checkpoints.intervalMs', 'must be a positive integer of milliseconds');
  if (o.onError !== undefined && typeof o.onError !== 'function')
    throw optionError('auditLog', 'checkpoints.onError', 'must be a function');
  return o as AuditCheckpointOptions;
}
