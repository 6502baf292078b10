// The gateway's own secrets are secrets whatever their shape: every value the configuration
// interpolated (`${env:…}`, `${file:…}`) and every credential it resolved is refused in a call's
// arguments, through the secret guard's `values`, and redacted from results where they come back
// (the `own-secrets` gate, right inside `credentials`), with no configuration. An operator's
// `guards.secrets` adds the key-format rules; turned off, only the format rules go.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { redactValue, type Middleware } from '@toolgate/core';
import { SECRET_RULE_IDS, type CanonicalGuards } from '@toolgate/middleware';
import type { AnyConfig } from './config/types';

/** Shorter values turn up by chance in ordinary text (ports, flags); the secret guard's own floor. */
export const MIN_OWN_SECRET_CHARS = 8;

/** The configured credentials that can be read now; one that cannot is skipped (its upstream reports it). */
export function resolvedCredentials(
  config: AnyConfig,
  baseDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  const out: string[] = [];
  for (const credential of Object.values(config.credentials ?? {})) {
    // One per principal: read per call from its store, never held here.
    if (credential.perPrincipal !== undefined) continue;
    if (credential.env !== undefined) {
      const value = env[credential.env];
      if (value !== undefined && value !== '') out.push(value);
      continue;
    }
    try {
      out.push(readFileSync(resolve(baseDir, credential.file!), 'utf8').replace(/\r?\n$/, ''));
    } catch {
      // Unreadable now: the upstream that uses it fails to connect and says so.
    }
  }
  return out;
}

/** The values worth guarding, deduplicated; each line of a multi-line value (a PEM key) as well. */
export function ownSecretValues(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const value of values) {
    if (value.length >= MIN_OWN_SECRET_CHARS) out.add(value);
    for (const line of value.split(/\r?\n/))
      if (line.trim().length >= MIN_OWN_SECRET_CHARS && !/^-----/.test(line.trim())) out.add(line.trim());
  }
  return [...out];
}

/** `guards` with the secret guard on and holding `secrets`, whatever the operator configured. */
export function withOwnSecrets(
  guards: CanonicalGuards | undefined,
  secrets: readonly string[],
): CanonicalGuards | undefined {
  const values = ownSecretValues(secrets);
  if (values.length === 0) return guards;
  const configured = guards?.secrets;
  const secretGuard = {
    ...(configured ?? { except: SECRET_RULE_IDS }),
    values: [...(configured?.values ?? []), ...values],
  };
  if (guards === undefined) return { egress: false, paths: false, commands: false, secrets: secretGuard };
  return { ...guards, secrets: secretGuard };
}

/**
 * The gateway's own secrets as they become known: the configuration's values at each load, and each
 * credential an upstream connection resolves (a rotated one included). One per gateway, across
 * reloads: a value once secret stays secret.
 */
export class OwnSecrets {
  readonly #all = new Set<string>();
  #values: readonly string[] | undefined;
  #listed: readonly string[] | undefined;

  constructor(values: readonly string[] = []) {
    for (const value of values) this.#all.add(value);
  }

  add(value: string): void {
    if (this.#all.has(value)) return;
    this.#all.add(value);
    this.#values = undefined;
    this.#listed = undefined;
  }

  /** Every value, as the configuration or a credential gave it (for scrubbing operator output). */
  all(): readonly string[] {
    // One list until a value is added: the log's scrubber then finds its redactor by the list.
    return (this.#listed ??= Object.freeze([...this.#all]));
  }

  /** The values worth guarding in calls (`ownSecretValues`). */
  values(): readonly string[] {
    // Frozen: redaction then finds its redactor by the list.
    return (this.#values ??= Object.freeze(ownSecretValues([...this.#all])));
  }
}

/**
 * Redacts the gateway's own secrets from a result, by value wherever they sit (an MCP result's
 * text blocks, structured content), before any other gate reads it: an upstream that reflects its
 * credential ("401 for key …") hands the model `[redacted]`, and the rest of its answer. It reads
 * `secrets` on every call, so a credential resolved after the chain was built counts too.
 */
export function ownSecretsGate(secrets: OwnSecrets): Middleware {
  return {
    name: 'own-secrets',
    after: ['credentials'],
    run: async function ownSecretsRun(ctx, next) {
      ctx.note('the gateway redacts its own secrets from the result');
      await next();
      const values = secrets.values();
      if (!ctx.ran || values.length === 0) return;
      const clean = redactValue(ctx.result, values);
      if (clean !== ctx.result) ctx.setResult(clean, "redacted the gateway's own secrets");
    },
  };
}
