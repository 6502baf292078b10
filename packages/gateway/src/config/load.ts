// Loading a configuration: parse (YAML or JSON, with node positions) → interpolate `${env:…}` and
// `${file:…}` → validate against the shipped JSON Schema → check names and units. Every problem is
// collected and reported at once, each with file, line and column; no value is ever quoted back.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import schema from '../../schema/toolgate.schema.json';
import { redact } from '@toolgate/core';
import { closest, ConfigError, type ConfigIssue, type ConfigPath } from './errors';
import { SCREEN_FINDING_IDS, SECRET_RULE_IDS } from '@toolgate/middleware';
import type { GatewayConfig, GuardsConfig, RuleConfig } from './types';
import { DURATION_HELP, parseDuration, parseSize, SIZE_HELP } from './units';

export interface LoadConfigOptions {
  /** Environment for `${env:…}`; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A loaded configuration and where each of its parts was written. */
export interface LoadedConfig {
  readonly config: GatewayConfig;
  /** The file it came from (absolute), when it came from one. */
  readonly file?: string;
  /** Relative paths in the configuration resolve against this folder. */
  readonly baseDir: string;
  /** An issue placed at `path` in the file (the key itself when `key` is set). */
  issue(path: ConfigPath, message: string, fix?: string, key?: boolean): ConfigIssue;
  /** Values that came from `${env:…}`/`${file:…}`: never to be printed. */
  readonly secrets: readonly string[];
}

// verbose: errors carry the schema object that failed, which names the known keys and the unit.
const validate = new Ajv({ allErrors: true, strict: false, verbose: true }).compile(schema);
const definitions = schema.definitions as Readonly<Record<string, unknown>>;

/** Shorter interpolated values (a port, `on`) cannot hold a secret, and scrubbing them would garble every message. */
const MIN_SCRUBBED_CHARS = 3;

/** The values worth scrubbing from operator output. */
export function scrubbable(values: readonly string[]): string[] {
  return values.filter((value) => value.length >= MIN_SCRUBBED_CHARS);
}

/** A static token shorter than this can be guessed; `openssl rand -base64 32` gives 44. */
export const MIN_TOKEN_CHARS = 32;

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

const INTERPOLATION = /\$\$\{|\$\{([^}]*)\}/g;
const CREDENTIAL_HOMES = new Set(['headers', 'env']);

/** Reads and loads a configuration file; throws `ConfigError` listing every problem. */
export function loadConfig(file: string, options: LoadConfigOptions = {}): LoadedConfig {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([
      {
        path: [],
        file: path,
        message:
          code === 'ENOENT'
            ? 'the configuration file does not exist'
            : `the configuration file cannot be read (${code ?? 'error'})`,
        fix: 'pass the path of a toolgate.yaml or toolgate.json with --config',
      },
    ]);
  }
  return parseConfig(text, { ...options, file: path });
}

/** Loads a configuration from its text (YAML or JSON). `file` names it in errors and anchors relative paths. */
export function parseConfig(text: string, options: LoadConfigOptions & { file?: string } = {}): LoadedConfig {
  const file = options.file;
  const baseDir = file === undefined ? process.cwd() : dirname(file);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  // Interpolated values, as they are found: no issue placed from here on (the loader's, an upstream's,
  // a tenant's, the runtime's) can quote one, whatever message it was built from.
  const secrets: string[] = [];
  const scrub = (text: string) => redact(text, scrubbable(secrets));
  const place = (path: ConfigPath, message: string, fix?: string, key = false): ConfigIssue => ({
    path,
    ...(file !== undefined ? { file } : {}),
    ...at(offsetOf(doc, path, key)),
    message: scrub(message),
    ...(fix !== undefined ? { fix: scrub(fix) } : {}),
  });

  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((error) => ({
        path: [],
        ...(file !== undefined ? { file } : {}),
        ...at(error.pos[0]),
        message: `not valid YAML or JSON (${error.code.toLowerCase().replace(/_/g, ' ')})`,
        fix: 'correct the syntax at this position',
      })),
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new ConfigError([
      place([], 'the document expands too far through aliases', 'write the values out'),
    ]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError([
      place([], 'the configuration must be a mapping of keys', 'start from the example in docs/gateway.md'),
    ]);

  const issues: ConfigIssue[] = [];
  const env = options.env ?? process.env;
  const value = interpolate(raw, [], { env, baseDir, issues, secrets, place });
  if (issues.length > 0) throw new ConfigError(issues);

  const problems: Problem[] = validate(value) ? [] : schemaIssues(validate.errors ?? []);
  const config = value as GatewayConfig;
  try {
    problems.push(...checkConfig(config));
  } catch (error) {
    // A document the schema already refused may not have the shape the name checks walk.
    if (problems.length === 0) throw error;
  }
  const seen = new Set<string>();
  for (const problem of problems) {
    const id = `${problem.path.join('\u0000')}|${problem.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push(place(problem.path, problem.message, problem.fix, problem.key));
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { config, ...(file !== undefined ? { file } : {}), baseDir, issue: place, secrets };
}

interface Problem {
  readonly path: ConfigPath;
  readonly message: string;
  readonly fix?: string;
  readonly key?: boolean;
}

interface InterpolationContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly baseDir: string;
  readonly issues: ConfigIssue[];
  readonly secrets: string[];
  readonly place: (path: ConfigPath, message: string, fix?: string) => ConfigIssue;
}

function interpolate(value: unknown, path: (string | number)[], context: InterpolationContext): unknown {
  if (typeof value === 'string') return interpolateString(value, path, context);
  if (Array.isArray(value)) return value.map((item, index) => interpolate(item, [...path, index], context));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolate(item, [...path, key], context);
    return out;
  }
  return value;
}

function interpolateString(text: string, path: ConfigPath, context: InterpolationContext): string {
  if (!text.includes('${')) return text;
  let failed = false;
  const fail = (message: string, fix: string) => {
    failed = true;
    context.issues.push(context.place(path, message, fix));
    return '';
  };
  // In an upstream's headers and env, `${credential:…}` is read again at connect time; there a literal
  // `${` (written `$${`, or inside an interpolated value) stays escaped so it is never read twice.
  const home = path.length >= 4 && path[0] === 'upstreams' && CREDENTIAL_HOMES.has(String(path[2]));
  const literal = (value: string) => (home ? value.replaceAll('${', () => '$${') : value);
  const result = text.replace(INTERPOLATION, (match, body: string | undefined) => {
    if (match === '$${') return home ? '$${' : '${';
    const colon = body!.indexOf(':');
    const kind = colon < 0 ? body! : body!.slice(0, colon);
    const name = colon < 0 ? '' : body!.slice(colon + 1).trim();
    if (name === '')
      return fail(`'\${${kind}}' names nothing`, 'write ${env:NAME}, ${file:PATH} or ${credential:NAME}');
    switch (kind) {
      case 'env': {
        const found = context.env[name];
        if (found === undefined)
          return fail(
            `the environment variable '${name}' is not set`,
            `set ${name} before starting toolgate`,
          );
        context.secrets.push(found);
        return literal(found);
      }
      case 'file': {
        try {
          const content = readFileSync(resolve(context.baseDir, name), 'utf8').replace(/\r?\n$/, '');
          context.secrets.push(content);
          return literal(content);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          return fail(
            `the file '${name}' cannot be read (${code === 'ENOENT' ? 'it does not exist' : (code ?? 'error')})`,
            'give a path relative to the configuration file, readable by toolgate',
          );
        }
      }
      case 'credential': {
        if (!home)
          return fail(
            "${credential:…} is only read in an upstream's headers or env",
            'use ${env:NAME} or ${file:PATH} here',
          );
        return match; // resolved when the upstream connects
      }
      default:
        return fail(
          `unknown interpolation '\${${kind}:…}'`,
          'the only interpolations are ${env:NAME}, ${file:PATH} and ${credential:NAME}; write $${ for a literal ${',
        );
    }
  });
  return failed ? text : result;
}

/** The credential names a string refers to. */
export function credentialRefs(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(INTERPOLATION)) {
    const body = match[1];
    if (body?.startsWith('credential:')) names.push(body.slice('credential:'.length).trim());
  }
  return names;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping of keys',
  'array,object': 'a list of rules, or a mapping { file | rules, default }',
  'string,object': 'a URL, or a mapping { url, publicUrl, … }',
  'boolean,object': 'true, false or a mapping of its options',
};

function pointerPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** The keys the failing schema object allows, for "known keys". */
function knownKeys(parent: unknown): string[] {
  const properties = (parent as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties === undefined ? [] : Object.keys(properties).filter((key) => key !== '$schema');
}

/** Which shared definition a failing schema object is, if any. */
function definitionOf(parent: unknown): string | undefined {
  for (const [name, definition] of Object.entries(definitions)) {
    if (definition === parent) return name;
    const branches = (definition as { oneOf?: unknown[] }).oneOf;
    if (branches?.includes(parent)) return name;
  }
  return undefined;
}

function schemaIssues(errors: readonly ErrorObject[]): Problem[] {
  // A failed oneOf also reports each branch's failure; the oneOf's own message says it better.
  const oneOfs = errors.filter((error) => error.keyword === 'oneOf');
  const inOneOf = (error: ErrorObject) =>
    error.keyword !== 'oneOf' &&
    error.schemaPath.includes('/oneOf/') &&
    oneOfs.some(
      (one) =>
        error.instancePath === one.instancePath || error.instancePath.startsWith(`${one.instancePath}/`),
    );
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const error of errors) {
    if (inOneOf(error)) continue;
    const problem = schemaProblem(error);
    const id = `${problem.path.join('\u0000')}|${problem.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    problems.push(problem);
  }
  return problems;
}

function schemaProblem(error: ErrorObject): Problem {
  const path = pointerPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent: unknown = error.parentSchema;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params['additionalProperty']);
      const known = knownKeys(parent);
      const guess = closest(key, known);
      return {
        path: [...path, key],
        key: true,
        message: `unknown key '${key}'`,
        fix:
          guess !== undefined
            ? `did you mean '${guess}'? Known keys here: ${known.join(', ')}`
            : known.length > 0
              ? `remove it; known keys here: ${known.join(', ')}`
              : 'remove it',
      };
    }
    case 'required':
      return {
        path,
        message: `'${String(params['missingProperty'])}' is missing`,
        fix: `add '${String(params['missingProperty'])}'`,
      };
    case 'type':
      return {
        path,
        message: `must be ${TYPE_WORDS[String(params['type'])] ?? String(params['type'])}`,
        fix: 'change its type',
      };
    case 'enum':
      return {
        path,
        message: `must be one of: ${(params['allowedValues'] as unknown[]).map((v) => `'${String(v)}'`).join(', ')}`,
        fix: 'use one of those values',
      };
    case 'propertyNames':
      return {
        path: [...path, String(params['propertyName'])],
        key: true,
        message: `the name '${String(params['propertyName'])}' is not allowed`,
        fix: "use letters, digits, '_' and '-' (at most 64)",
      };
    case 'pattern':
      return { path, ...patternProblem(definitionOf(parent), path) };
    case 'oneOf':
      return { path, ...oneOfProblem(definitionOf(parent), path) };
    default:
      return {
        path,
        message: (error.message ?? 'is not valid').replace(/^must NOT/, 'must not'),
        fix: 'see schema/toolgate.schema.json',
      };
  }
}

function patternProblem(definition: string | undefined, path: ConfigPath): { message: string; fix: string } {
  if (definition === 'duration') return { message: 'is not a duration', fix: `write ${DURATION_HELP}` };
  if (definition === 'size') return { message: 'is not a size', fix: `write ${SIZE_HELP}` };
  if (definition === 'name' || path[path.length - 1] === 'name')
    return {
      message: 'is not a valid name',
      fix: "use letters, digits, '_', '-' (and '.' for a limit), at most 64",
    };
  if (definition === 'capability')
    return { message: 'is not a capability name', fix: "capabilities are snake_case, e.g. 'fs_write'" };
  if (definition === 'argPath')
    return { message: 'is not an argument path', fix: "name an argument, e.g. 'url' or 'hooks.*.target'" };
  if (definition === 'root')
    return { message: 'is not an absolute directory', fix: "write an absolute path like '/srv/data'" };
  if (path[path.length - 2] === 'allowHosts')
    return {
      message: 'is not a host pattern',
      fix: "write a host, e.g. 'api.example.com' or '*.example.com'",
    };
  if (path[path.length - 2] === 'schemes')
    return { message: 'is not a URL scheme', fix: "write a scheme without ':', e.g. 'https'" };
  const last = path[path.length - 1];
  if (last === 'state')
    return { message: 'is not a state store', fix: "write 'memory:', 'sqlite:PATH' or a 'postgres://…' URL" };
  if (last === 'limits')
    return { message: 'is not a limits store', fix: "write 'memory:' or a 'redis://…' URL" };
  if (last === 'prefix') return { message: 'is not a valid prefix', fix: "use letters, digits, '_' and '-'" };
  return {
    message: 'is not an http:// or https:// URL',
    fix: 'write the full URL, e.g. http://127.0.0.1:9000/mcp',
  };
}

function oneOfProblem(definition: string | undefined, path: ConfigPath): { message: string; fix: string } {
  const last = path[path.length - 1];
  if (definition === 'size') return { message: 'is not a size', fix: `write ${SIZE_HELP}` };
  if (last === 'audience')
    return { message: 'must be a string or a list of strings', fix: 'name the expected audience' };
  if (last === 'per')
    return {
      message: "must be 'tenant', 'principal', 'tool' or a list of them",
      fix: 'say whose bucket the limit is kept in',
    };
  return { message: 'does not match any allowed form', fix: 'see schema/toolgate.schema.json' };
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

/** Checks the schema cannot express: units, names that must exist, exclusive keys, key strength. */
function checkConfig(config: GatewayConfig): Problem[] {
  const problems: Problem[] = [];
  const add = (path: ConfigPath, message: string, fix?: string, key?: boolean) =>
    problems.push({ path, message, ...(fix !== undefined ? { fix } : {}), ...(key ? { key } : {}) });
  const duration = (path: ConfigPath, value: string | undefined) => {
    if (value === undefined) return;
    const parsed = parseDuration(value);
    if (typeof parsed === 'string') add(path, 'is not a duration', `write ${DURATION_HELP}`);
  };
  const size = (path: ConfigPath, value: string | number | undefined) => {
    if (value === undefined) return;
    const parsed = parseSize(value);
    if (typeof parsed === 'string') add(path, 'is not a size', `write ${SIZE_HELP}`);
  };
  const upstreamNames = Object.keys(config.upstreams);
  const tenantNames = Object.keys(config.tenants);
  const credentialNames = Object.keys(config.credentials ?? {});

  duration(['listen', 'sessionIdle'], config.listen?.sessionIdle);
  duration(['listen', 'drain'], config.listen?.drain);
  size(['listen', 'maxBody'], config.listen?.maxBody);
  duration(['auth', 'jwt', 'clockTolerance'], config.auth?.jwt?.clockTolerance);
  duration(['auth', 'jwt', 'maxLifetime'], config.auth?.jwt?.maxLifetime);
  const jwks = config.auth?.jwt?.jwks;
  if (jwks !== undefined && jwksProblem(jwks) !== undefined)
    add(['auth', 'jwt', 'jwks'], jwksProblem(jwks)!, 'serve the key set over https://, or give a JWKS file');
  duration(['checkIns', 'ttl'], config.checkIns?.ttl);
  duration(['checkIns', 'hold'], config.checkIns?.hold);
  duration(['audit', 'checkpoints', 'interval'], config.audit?.checkpoints?.interval);
  duration(['audit', 'commitWindow'], config.audit?.commitWindow);
  const commitWindowMs = parseDuration(config.audit?.commitWindow);
  if (typeof commitWindowMs === 'number' && commitWindowMs > 60_000)
    add(['audit', 'commitWindow'], 'is longer than a minute', "write a short window such as '5ms'");
  const webhook = config.audit?.checkpoints?.webhook;
  if (webhook !== undefined && !isLoopbackOrHttps(webhook))
    add(
      ['audit', 'checkpoints', 'webhook'],
      'is not an https URL (plain http is allowed only on loopback)',
      'write an https:// URL',
    );
  size(['defaults', 'resultCeiling', 'maxBytes'], config.defaults?.resultCeiling?.maxBytes);

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
    duration([...at, 'timeout'], upstream.timeout);
    for (const [tool, declaration] of Object.entries(upstream.tools ?? {}))
      size([...at, 'tools', tool, 'resultCeiling', 'maxBytes'], declaration.resultCeiling?.maxBytes);
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
      const store = credential.perPrincipal.store ?? config.stores?.state ?? 'memory:';
      if (store !== 'memory:' && !store.startsWith('sqlite:') && !/^postgres(ql)?:\/\//.test(store))
        add(
          credential.perPrincipal.store === undefined ? at : [...at, 'store'],
          "keeps per-principal credentials in memory:, sqlite:PATH or a 'postgres://' URL only",
          "set perPrincipal.store to 'sqlite:PATH' or a 'postgres://' URL",
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
      duration([...at, 'tokenExchange', 'timeout'], exchange.timeout);
    }
    duration([...at, 'clientCredentials', 'timeout'], auth.clientCredentials?.timeout);
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
      duration([...at, index, 'window'], limit.window);
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
    const egress = guards.egress;
    if (typeof egress === 'object') duration([...at, 'egress', 'deadline'], egress.deadline);
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

/** Offset of the node at `path` (or of its key), or of the nearest ancestor written in the file. */
function offsetOf(doc: Document, path: ConfigPath, key: boolean): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (let index = 0; index < path.length; index++) {
    const segment = path[index]!;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
      if (pair === undefined) return offset;
      const last = index === path.length - 1;
      node = last && key ? pair.key : pair.value;
      offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      if (node === undefined) return offset;
      offset = rangeStart(node) ?? offset;
    } else return offset;
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  return (node as Node | null | undefined)?.range?.[0];
}

/** 32 bytes as base64 (or base64url) or hex: an AES-256 key. */
export function isCredentialKey(text: string): boolean {
  const trimmed = text.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return true;
  return /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed) && Buffer.from(trimmed, 'base64').length === 32;
}
