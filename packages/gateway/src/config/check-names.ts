// Step four of loading: what the schema cannot express — names that must exist (tenants, upstreams,
// credentials, secret rules), keys that exclude each other, repeated names, key and token strength.

import { isAbsolute } from 'node:path';
import { SCREEN_FINDING_IDS, SECRET_RULE_IDS } from '@toolgate/middleware';
import { closest, type ConfigPath } from './errors';
import { credentialRefs } from './interpolate';
import { parseDuration } from './units';
import type { Problem } from './problem';
import type { GatewayConfig, GuardsConfig, RuleConfig } from './types';

/** A static token shorter than this can be guessed; `openssl rand -base64 32` gives 44. */
export const MIN_TOKEN_CHARS = 32;
/** How long @toolgate/mcp's relayed requestState lives: a parked call cannot wait past it usefully. */
const PARKED_CALL_WAIT_MAX_MS = 10 * 60_000;

/**
 * Why a JWKS location cannot be trusted, naming no part of it; undefined for a file path, an
 * https:// URL, or http:// to a loopback address (tests, a sidecar).
 */
export function jwksProblem(jwks: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(jwks)) return undefined;
  let url: URL;
  try {
    url = new URL(jwks);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return url.protocol === 'http:'
    ? 'is an http:// URL: keys fetched in the clear can be swapped, so only https:// (or a loopback address) is read'
    : 'uses a scheme other than https://';
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** An https URL, or http to a loopback host: a checkpoint must not cross a network in the clear. */
function isLoopbackOrHttps(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** Checks the schema cannot express: names that must exist, exclusive keys, key strength. */
export function checkNames(config: GatewayConfig): Problem[] {
  const problems: Problem[] = [];
  const add = (path: ConfigPath, message: string, fix?: string, key?: boolean) =>
    problems.push({ path, message, ...(fix !== undefined ? { fix } : {}), ...(key ? { key } : {}) });
  const upstreamNames = Object.keys(config.upstreams);
  const tenantNames = Object.keys(config.tenants);
  const credentialNames = Object.keys(config.credentials ?? {});

  const jwks = config.auth?.jwt?.jwks;
  if (jwks !== undefined && jwksProblem(jwks) !== undefined)
    add(['auth', 'jwt', 'jwks'], jwksProblem(jwks)!, 'serve the key set over https://, or give a JWKS file');
  const commitWindowMs = parseDuration(config.audit?.commitWindow);
  if (typeof commitWindowMs === 'number' && commitWindowMs > 60_000)
    add(['audit', 'commitWindow'], 'is longer than a minute', "write a short window such as '5ms'");
  if (config.audit?.journal === true) {
    if (config.audit.durability === 'record')
      add(
        ['audit', 'journal'],
        'needs durability: batch (with record, each call waits for its own commit to the store)',
        'remove journal, or write durability: batch',
      );
    const kept = config.audit.store ?? config.stores?.state;
    // A reference (${env:…}) is only known once resolved; the journal is then simply not opened.
    const notSqliteFile =
      kept === undefined ||
      (typeof kept === 'string' && (/^(memory:|postgres)/.test(kept) || kept === 'sqlite::memory:'));
    if (notSqliteFile)
      add(
        ['audit', 'journal'],
        'needs the log in a SQLite file (audit.store, else stores.state)',
        'remove journal, or keep the log in a sqlite: file',
      );
  }
  const parkedCallWaitMs = parseDuration(config.listen?.parkedCallWait);
  if (typeof parkedCallWaitMs === 'number' && parkedCallWaitMs > PARKED_CALL_WAIT_MAX_MS)
    add(
      ['listen', 'parkedCallWait'],
      "is longer than the 10 minutes a relayed question's requestState lives: the client's retry could not reach the call",
      "write '10m' or less",
    );
  const webhook = config.audit?.checkpoints?.webhook;
  if (webhook !== undefined && !isLoopbackOrHttps(webhook))
    add(
      ['audit', 'checkpoints', 'webhook'],
      'is not an https URL (plain http is allowed only on loopback)',
      'write an https:// URL',
    );

  if (config.checkIns !== undefined && new TextEncoder().encode(config.checkIns.key).length < 32)
    add(
      ['checkIns', 'key'],
      'the check-in key is shorter than 32 bytes',
      'use at least 32 random bytes, e.g. `openssl rand -base64 48`',
    );

  const knownTenant = (path: ConfigPath, tenant: string) => {
    if (!tenantNames.includes(tenant)) {
      const guess = closest(tenant, tenantNames);
      add(
        path,
        `names the tenant '${tenant}', which is not configured`,
        guess !== undefined
          ? `did you mean '${guess}'?`
          : `add it under 'tenants' or use one of: ${tenantNames.join(', ')}`,
      );
    }
  };
  const tokens = config.auth?.tokens ?? [];
  tokens.forEach((entry, index) => {
    knownTenant(['auth', 'tokens', index, 'identity', 'tenant'], entry.identity.tenant);
    if (entry.token.length < MIN_TOKEN_CHARS)
      add(
        ['auth', 'tokens', index, 'token'],
        `the token is shorter than ${MIN_TOKEN_CHARS} characters`,
        'use at least 32 random characters, e.g. `openssl rand -base64 32`',
      );
    const first = tokens.findIndex((other) => other.token === entry.token);
    if (first < index)
      add(
        ['auth', 'tokens', index, 'token'],
        `repeats the token of auth.tokens[${first}]`,
        'give each identity its own token',
      );
  });
  if (config.stdio !== undefined) knownTenant(['stdio', 'identity', 'tenant'], config.stdio.identity.tenant);

  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const at = ['upstreams', name];
    if ((upstream.command === undefined) === (upstream.url === undefined))
      add(
        at,
        "needs exactly one of 'command' (a stdio server) or 'url' (a Streamable HTTP server)",
        "keep one of 'command' or 'url'",
      );
    if (upstream.url !== undefined) {
      if (upstream.env !== undefined)
        add([...at, 'env'], "applies only to a stdio server ('command')", "remove 'env'", true);
      if (upstream.cwd !== undefined)
        add([...at, 'cwd'], "applies only to a stdio server ('command')", "remove 'cwd'", true);
    }
    if (upstream.command !== undefined && upstream.headers !== undefined)
      add([...at, 'headers'], "apply only to an HTTP server ('url')", "remove 'headers'", true);
    const base = upstream.paths?.base;
    if (
      base !== undefined &&
      (!isAbsolute(base) || base.includes('\0') || base.split(/[\\/]/).includes('..'))
    )
      add(
        [...at, 'paths', 'base'],
        "must be an absolute directory without '..'",
        'write the directory the server opens relative paths from, like /srv/app',
      );
    for (const home of ['headers', 'env'] as const) {
      for (const [key, text] of Object.entries(upstream[home] ?? {})) {
        const refs = credentialRefs(text);
        for (const credential of refs) {
          if (!credentialNames.includes(credential))
            add(
              [...at, home, key],
              `uses the credential '${credential}', which is not configured`,
              `add '${credential}' under 'credentials' (with env: or file:)`,
            );
        }
        const personal = refs.filter(
          (credential) => config.credentials?.[credential]?.perPrincipal !== undefined,
        );
        if (personal.length > 0 && home === 'env')
          add(
            [...at, home, key],
            `uses the per-principal credential '${personal[0]}', and a stdio server's environment is shared by every caller`,
            "send it in an HTTP upstream's headers, which carry each call's own",
          );
        else if (personal.length > 0 && upstream.url !== undefined && !isLoopbackOrHttps(upstream.url))
          add(
            ['upstreams', name, 'url'],
            "is plain http:// to a host that is not loopback, and its calls would carry principals' credentials in the clear",
            'use https://',
          );
        else if (personal.length > 0 && personal.length < refs.length)
          add(
            [...at, home, key],
            'mixes a per-principal credential with a shared one in one header',
            'give each its own header',
          );
      }
    }
  }
  for (const [name, credential] of Object.entries(config.credentials ?? {})) {
    const homes = [credential.env, credential.file, credential.perPrincipal].filter(
      (home) => home !== undefined,
    );
    if (homes.length !== 1)
      add(
        ['credentials', name],
        "needs exactly one of 'env', 'file' or 'perPrincipal'",
        'say where the secret is: env: NAME, file: PATH, or perPrincipal: { key: ${env:KEY} } for one per principal',
      );
    if (credential.perPrincipal !== undefined) {
      const at = ['credentials', name, 'perPrincipal'];
      if (!isCredentialKey(credential.perPrincipal.key))
        add(
          [...at, 'key'],
          'is not a 32-byte key',
          'give 32 random bytes as base64 or hex, e.g. `openssl rand -base64 32`, through ${env:NAME}',
        );
    }
  }
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const at = ['upstreams', name, 'auth'];
    const auth = upstream.auth;
    if (auth === undefined) continue;
    if (upstream.url === undefined)
      add(at, "applies only to an HTTP server ('url'): a token travels in a header", "remove 'auth'");
    else if (!isLoopbackOrHttps(upstream.url))
      add(
        ['upstreams', name, 'url'],
        "is plain http:// to a host that is not loopback, and its calls would carry callers' tokens in the clear",
        'use https://',
      );
    const exchange = auth.tokenExchange;
    if (exchange !== undefined) {
      if ((exchange.audience === undefined) === (exchange.resource === undefined))
        add(
          [...at, 'tokenExchange'],
          "needs exactly one of 'audience' or 'resource'",
          'name the token the upstream accepts: audience: NAME or resource: URL',
        );
      if (config.auth?.jwt === undefined)
        add(
          [...at, 'tokenExchange'],
          "exchanges the caller's JWT, and auth.jwt is not configured (a static token cannot be exchanged)",
          'configure auth.jwt so callers present JWTs',
        );
    }
    for (const [kind, client] of [
      ['tokenExchange', exchange?.client],
      ['clientCredentials', auth.clientCredentials?.client],
    ] as const) {
      if (client !== undefined && (client.secret === undefined) === (client.privateKeyJwt === undefined))
        add(
          [...at, kind, 'client'],
          "needs exactly one of 'secret' or 'privateKeyJwt'",
          'give the client secret as ${env:NAME}, or its private key as privateKeyJwt: ${file:PATH}',
        );
    }
  }

  const checkRules = (rules: readonly { name: string }[] | undefined, at: ConfigPath) => {
    const names = new Set<string>();
    rules?.forEach((rule, index) => {
      if (names.has(rule.name))
        add([...at, index, 'name'], `repeats the rule name '${rule.name}'`, 'give each rule its own name');
      names.add(rule.name);
    });
  };
  const checkPolicyShape = (policy: GatewayConfig['policy'], at: ConfigPath) => {
    if (policy === undefined || Array.isArray(policy)) return;
    const shaped = policy as Exclude<GatewayConfig['policy'], readonly unknown[] | undefined>;
    if (shaped.file !== undefined && shaped.rules !== undefined)
      add(
        at,
        "needs at most one of 'file' or 'rules'",
        "keep the rules in the file, or inline under 'rules'",
      );
  };
  const checkLimits = (limits: GatewayConfig['limits'], at: ConfigPath, taken: Set<string>) => {
    limits?.forEach((limit, index) => {
      if ((limit.calls === undefined) === (limit.budget === undefined))
        add(
          [...at, index],
          "needs exactly one of 'calls' (a rate) or 'budget'",
          "keep one of 'calls' or 'budget'",
        );
      if (limit.cost !== undefined && limit.budget === undefined)
        add([...at, index, 'cost'], "applies only to a 'budget'", "remove 'cost' or use 'budget'", true);
      if (limit.budget !== undefined && limit.cost === undefined)
        add([...at, index], "a budget needs 'cost': units per call by tool", "add cost: { 'tool_name': 1 }");
      if (taken.has(limit.name))
        add([...at, index, 'name'], `repeats the limit name '${limit.name}'`, 'give each limit its own name');
      taken.add(limit.name);
    });
  };
  const checkGuards = (guards: GuardsConfig | undefined, at: ConfigPath) => {
    if (guards === undefined) return;
    const ids = (
      list: readonly string[] | undefined,
      where: ConfigPath,
      known: readonly string[],
      what: string,
    ) =>
      list?.forEach((id, index) => {
        if (known.includes(id)) return;
        const guess = closest(id, known);
        add(
          [...where, index],
          `names the ${what} '${id}', which does not exist`,
          guess !== undefined ? `did you mean '${guess}'?` : `known: ${known.join(', ')}`,
        );
      });
    const paths = guards.paths;
    if (typeof paths === 'object')
      for (const [tool, roots] of Object.entries(paths.tools ?? {}))
        checkRoots(roots, [...at, 'paths', 'tools', tool]);
    const secrets = guards.secrets;
    if (typeof secrets === 'object') {
      ids(secrets.except, [...at, 'secrets', 'except'], SECRET_RULE_IDS, 'secret rule');
      for (const [tool, list] of Object.entries(secrets.exceptFor ?? {}))
        ids(list, [...at, 'secrets', 'exceptFor', tool], SECRET_RULE_IDS, 'secret rule');
    }
    const results = guards.results;
    if (typeof results === 'object')
      ids(results.except, [...at, 'results', 'except'], SCREEN_FINDING_IDS, 'screen finding');
  };
  const checkRoots = (roots: Readonly<Record<string, readonly string[]>>, at: ConfigPath) => {
    for (const [arg, list] of Object.entries(roots))
      list.forEach((root, index) => {
        if (root.includes('\0') || root.split(/[\\/]/).includes('..'))
          add(
            [...at, arg, index],
            "a root may not contain '..' or NUL",
            "write the directory itself, like '/srv/data'",
          );
      });
  };
  checkGuards(config.guards, ['guards']);
  for (const [name, upstream] of Object.entries(config.upstreams))
    for (const [tool, declaration] of Object.entries(upstream.tools ?? {}))
      if (declaration.paths !== undefined)
        checkRoots(declaration.paths, ['upstreams', name, 'tools', tool, 'paths']);
  for (const [name, tenant] of Object.entries(config.tenants))
    checkGuards(tenant.guards, ['tenants', name, 'guards']);

  const [globalRules, globalAt] = policyRules(config.policy, ['policy']);
  checkRules(globalRules, globalAt);
  checkPolicyShape(config.policy, ['policy']);
  const globalLimits = new Set<string>();
  checkLimits(config.limits, ['limits'], globalLimits);

  for (const [name, tenant] of Object.entries(config.tenants)) {
    tenant.upstreams.forEach((upstream, index) => {
      if (!upstreamNames.includes(upstream)) {
        const guess = closest(upstream, upstreamNames);
        add(
          ['tenants', name, 'upstreams', index],
          `names the upstream '${upstream}', which is not configured`,
          guess !== undefined
            ? `did you mean '${guess}'?`
            : `add it under 'upstreams' or use one of: ${upstreamNames.join(', ') || '(none yet)'}`,
        );
      }
      if (tenant.upstreams.indexOf(upstream) < index)
        add(['tenants', name, 'upstreams', index], `lists the upstream '${upstream}' twice`, 'list it once');
    });
    const [tenantRules, tenantAt] = policyRules(tenant.policy, ['tenants', name, 'policy']);
    checkRules(tenantRules, tenantAt);
    checkPolicyShape(tenant.policy, ['tenants', name, 'policy']);
    // First match across both lists: a tenant rule named like a global one would be ambiguous in every record.
    tenantRules?.forEach((rule, index) => {
      if (globalRules?.some((other) => other.name === rule.name))
        add(
          [...tenantAt, index, 'name'],
          `repeats the name of the global policy rule '${rule.name}'`,
          'give each rule its own name',
        );
    });
    checkLimits(tenant.limits, ['tenants', name, 'limits'], new Set(globalLimits));
  }
  return problems;
}

/** The inline rules of a `policy` (a list, or `rules:` in a mapping) and where they are written. */
export function policyRules(
  policy: GatewayConfig['policy'],
  at: ConfigPath,
): [readonly RuleConfig[] | undefined, ConfigPath] {
  if (policy === undefined) return [undefined, at];
  if (Array.isArray(policy)) return [policy as readonly RuleConfig[], at];
  const rules = (policy as { rules?: readonly RuleConfig[] }).rules;
  return [rules, [...at, 'rules']];
}

/** 32 bytes as base64 (or base64url) or hex: an AES-256 key. */
export function isCredentialKey(text: string): boolean {
  const trimmed = text.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return true;
  return /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed) && Buffer.from(trimmed, 'base64').length === 32;
}
