// `toolgate audit verify` and `toolgate audit export`: the audit log the configuration names, read
// offline. verify exits 0 when every record holds, 1 naming the first record that does not.

import { createWriteStream, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { auditPublicKey, exportAuditLog, verifyAuditLog } from '@toolgate/audit';
import { auditStoreUrl, openAuditStore } from '../audit';
import type { LoadedConfig } from '../config/load';
import type { CommandIo, ParsedArgs } from './io';

export async function auditCommand(
  loaded: LoadedConfig,
  sub: 'verify' | 'export',
  args: ParsedArgs,
  io: CommandIo,
): Promise<number> {
  const { config } = loaded;
  if (config.audit === undefined) {
    io.err(
      'toolgate audit: this configuration has no audit log; add audit: { signingKey: "${file:./audit-key.pem}" }',
    );
    return 1;
  }
  const url = auditStoreUrl(config);
  if (url === 'memory:') {
    io.err(
      "toolgate audit: the audit log is kept in memory:, inside the running gateway; set audit.store (or stores.state) to 'sqlite:PATH' or a 'postgres://' URL to read it from the command line",
    );
    return 1;
  }
  const opened = openAuditStore(url, loaded.baseDir);
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
    const verdict = await verifyAuditLog(opened.store, publicKey);
    if (verdict.ok) {
      io.out(`audit log ok: ${verdict.count} record(s), hash chain and signatures hold`);
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
