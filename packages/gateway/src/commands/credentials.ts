// `toolgate credentials list|set|delete NAME`, against the store of a per-principal credential
// (`credentials.NAME.perPrincipal`: SQLite; a `memory:` store lives only inside the running gateway,
// which the operator API /api/credentials reaches). A value is never read from the command line,
// where other users of the machine could see it: `--from-env VAR` or `--from-file PATH`.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LoadedConfig } from '../config/load';
import { MAX_CREDENTIAL_CHARS } from '../credentials-api';
import { credentialStoreLocation, openPrincipalCredentials } from '../principal-credentials';
import { UsageError, type CommandIo, type ParsedArgs } from './io';

export async function credentialsCommand(
  loaded: LoadedConfig,
  sub: 'list' | 'set' | 'delete',
  name: string,
  args: ParsedArgs,
  io: CommandIo,
): Promise<number> {
  const { resolved: config } = loaded;
  if (config.credentials?.[name]?.perPrincipal === undefined) {
    const personal = Object.entries(config.credentials ?? {})
      .filter(([, credential]) => credential.perPrincipal !== undefined)
      .map(([known]) => known);
    throw new UsageError(
      `'${name}' is not a per-principal credential; configured: ${personal.join(', ') || '(none)'}`,
    );
  }
  if (credentialStoreLocation(config, name).kind === 'memory')
    throw new UsageError(
      `the credential '${name}' is kept in memory:, inside the running gateway; use its operator API (PUT /api/credentials/${name}/TENANT/PRINCIPAL), or set perPrincipal.store to 'sqlite:PATH'`,
    );
  const flag = (key: string): string | undefined => {
    const value = args.flags.get(key);
    return typeof value === 'string' ? value : undefined;
  };
  const tenant = flag('tenant');
  if (tenant !== undefined && config.tenants[tenant] === undefined)
    throw new UsageError(`the tenant '${tenant}' is not configured`);
  const vault = openPrincipalCredentials(config)!;
  try {
    if (sub === 'list') {
      const entries = await vault.list(name, tenant);
      if (entries.length === 0) io.out(`no principal has stored '${name}'`);
      for (const entry of entries) io.out(`${entry.tenant}/${entry.principal}  set ${entry.updatedAt}`);
      return 0;
    }
    const principal = flag('principal');
    if (tenant === undefined || principal === undefined)
      throw new UsageError(`'credentials ${sub}' needs --tenant T and --principal P`);
    if (sub === 'delete') {
      const deleted = await vault.delete(name, tenant, principal);
      io.out(
        deleted ? `deleted '${name}' of ${tenant}/${principal}` : `${tenant}/${principal} had no '${name}'`,
      );
      return deleted ? 0 : 1;
    }
    const value = valueOf(flag('from-env'), flag('from-file'), io);
    await vault.set(name, tenant, principal, value);
    io.out(`stored '${name}' for ${tenant}/${principal} (encrypted; the value is not shown)`);
    return 0;
  } finally {
    await vault.close();
  }
}

function valueOf(fromEnv: string | undefined, fromFile: string | undefined, io: CommandIo): string {
  if ((fromEnv === undefined) === (fromFile === undefined))
    throw new UsageError(
      "'credentials set' reads the value from exactly one of --from-env VAR or --from-file PATH",
    );
  let value: string | undefined;
  if (fromEnv !== undefined) {
    value = io.env[fromEnv];
    if (value === undefined || value === '')
      throw new UsageError(`the environment variable '${fromEnv}' is not set`);
  } else {
    try {
      value = readFileSync(resolve(io.cwd, fromFile!), 'utf8').replace(/\r?\n$/, '');
    } catch {
      throw new UsageError('the file given with --from-file cannot be read');
    }
  }
  if (value === '' || value.length > MAX_CREDENTIAL_CHARS)
    throw new UsageError(`a credential is a non-empty value of at most ${MAX_CREDENTIAL_CHARS} characters`);
  return value;
}
