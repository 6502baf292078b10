// Named credentials (`credentials: { billing: { env: BILLING_TOKEN } }`) and the `${credential:NAME}`
// references that use them. A failure names the credential and where it was looked for, never a value.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CredentialConfig } from './config/types';

export class CredentialError extends Error {
  override readonly name = 'CredentialError';
}

export function resolveCredential(
  name: string,
  credentials: Readonly<Record<string, Pick<CredentialConfig, 'env' | 'file'>>> | undefined,
  baseDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const config = credentials?.[name];
  if (config === undefined) throw new CredentialError(`the credential '${name}' is not configured`);
  if (config.env !== undefined) {
    const value = env[config.env];
    if (value === undefined || value === '')
      throw new CredentialError(
        `the credential '${name}' reads the environment variable '${config.env}', which is not set`,
      );
    return value;
  }
  try {
    return readFileSync(resolve(baseDir, config.file!), 'utf8').replace(/\r?\n$/, '');
  } catch {
    throw new CredentialError(`the credential '${name}' reads a file that cannot be read`);
  }
}

const REFERENCE = /\$\$\{|\$\{credential:([^}]*)\}/g;

/**
 * `text` with each `${credential:NAME}` replaced by the secret, and each `$${` (a literal the loader
 * escaped, an interpolated value among them) read as `${`: nothing is interpolated twice.
 */
export function fillCredentials(text: string, lookup: (name: string) => string): string {
  return text.replace(REFERENCE, (_match, name: string | undefined) =>
    name === undefined ? '${' : lookup(name.trim()),
  );
}
