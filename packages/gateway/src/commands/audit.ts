// `toolgate audit verify` and `toolgate audit export`: the audit log the configuration names, read
// offline. verify exits 0 when every record holds, 1 naming the first record that does not, or when
// the log ends before or disagrees with a checkpoint (`--checkpoint`) or head (`--head`) kept apart.
// It prints the head it checked, to keep and pass back as `--head` next time.

import { createWriteStream, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AuditConfigError,
  auditPublicKey,
  exportAuditLog,
  parseAuditHead,
  parseCheckpoint,
  verifyAuditLogHead,
  type AuditCheckpoint,
  type VerifyAuditLogOptions,
} from '@toolgate/audit';
import type { AuditHead } from '@toolgate/core';
import { auditStoreLocation, openAuditStore } from '../audit';
import type { LoadedConfig } from '../config/load';
import { UsageError, type CommandIo, type ParsedArgs } from './io';

const CHECKPOINT_DEADLINE_MS = 10_000;

/** The checkpoint `--checkpoint` names: a file (relative to where the command runs) or an http(s) URL. */
async function readCheckpoint(where: string, cwd: string): Promise<AuditCheckpoint> {
  let text: string;
  if (/^https?:\/\//i.test(where)) {
    let response: Response;
    try {
      response = await fetch(where, {
        redirect: 'error',
        signal: AbortSignal.timeout(CHECKPOINT_DEADLINE_MS),
      });
    } catch (error) {
      throw new UsageError(`--checkpoint: the URL could not be read (${(error as Error).name})`);
    }
    if (!response.ok) throw new UsageError(`--checkpoint: the URL answered HTTP ${response.status}`);
    text = await response.text();
  } else {
    try {
      text = readFileSync(resolve(cwd, where), 'utf8');
    } catch (error) {
      throw new UsageError(
        `--checkpoint: the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  try {
    return parseCheckpoint(text);
  } catch (error) {
    throw new UsageError(
      `--checkpoint: ${error instanceof AuditConfigError ? `${error.problem}.` : (error as Error).message}`,
    );
  }
}

function headFlag(value: string | true | undefined): AuditHead | undefined {
  if (value === undefined) return undefined;
  if (value === true)
    throw new UsageError('--head needs a value: SEQ:HASH, as `toolgate audit verify` prints it');
  try {
    return parseAuditHead(value);
  } catch (error) {
    throw new UsageError(
      `--head: ${error instanceof AuditConfigError ? `${error.problem}.` : (error as Error).message}`,
    );
  }
}

export async function auditCommand(
  loaded: LoadedConfig,
  sub: 'verify' | 'export',
  args: ParsedArgs,
  io: CommandIo,
): Promise<number> {
  const { resolved: config } = loaded;
  if (config.audit === undefined) {
    io.err(
      'toolgate audit: this configuration has no audit log; add audit: { signingKey: "${file:./audit-key.pem}" }',
    );
    return 1;
  }
  const location = auditStoreLocation(config);
  if (location.kind === 'memory') {
    io.err(
      "toolgate audit: the audit log is kept in memory:, inside the running gateway; set audit.store (or stores.state) to 'sqlite:PATH' or a 'postgres://' URL to read it from the command line",
    );
    return 1;
  }
  const opened = openAuditStore(location);
  try {
    if (sub === 'export') {
      const out = args.flags.get('out');
      if (typeof out === 'string') {
        const stream = createWriteStream(resolve(io.cwd, out));
        for await (const line of exportAuditLog(opened.store)) if (!stream.write(line)) await drained(stream);
        await new Promise<void>((done, fail) =>
          stream.end((error?: Error | null) => (error ? fail(error) : done())),
        );
      } else for await (const line of exportAuditLog(opened.store)) io.out(line.replace(/\n$/, ''));
      return 0;
    }
    const given = args.flags.get('public-key');
    const publicKey =
      typeof given === 'string'
        ? readFileSync(resolve(io.cwd, given), 'utf8')
        : await auditPublicKey(config.audit.signingKey);
    const checkpointFlag = args.flags.get('checkpoint');
    if (checkpointFlag === true) throw new UsageError('--checkpoint needs a value: a FILE or an http(s) URL');
    const head = headFlag(args.flags.get('head'));
    const checkpoint =
      checkpointFlag === undefined ? undefined : await readCheckpoint(checkpointFlag, io.cwd);
    const options: VerifyAuditLogOptions = {
      ...(head !== undefined ? { head } : {}),
      ...(checkpoint !== undefined ? { checkpoint } : {}),
    };
    const verdict = await verifyAuditLogHead(opened.store, publicKey, options);
    if (verdict.ok) {
      const reached =
        verdict.head === undefined ? 'none (empty log)' : `${verdict.head.seq}:${verdict.head.hash}`;
      io.out(`audit log ok: ${verdict.count} record(s), hash chain and signatures hold`);
      io.out(`head: ${reached}`);
      if (checkpoint !== undefined)
        io.out(
          `tail anchored: the log reaches and agrees with the checkpoint of ${checkpoint.at} (record ${checkpoint.seq})`,
        );
      if (head !== undefined)
        io.out(`tail anchored: the log reaches and agrees with the head given (record ${head.seq})`);
      if (verdict.anchoredBy === undefined) {
        const file = config.audit.checkpoints?.file;
        io.out(
          "tail unanchored: records cut from the end together with the store's head would not show; " +
            `pass --checkpoint ${file ?? 'FILE|URL'} or --head SEQ:HASH (keep the head printed above)`,
        );
      }
      return 0;
    }
    io.err(`audit log broken at seq ${verdict.seq}: ${verdict.why}`);
    return 1;
  } finally {
    await opened.close().catch(() => undefined);
  }
}

function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((done) => stream.once('drain', () => done()));
}
