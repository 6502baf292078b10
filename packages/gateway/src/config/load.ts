// Loading a configuration, one step per module: parse (YAML or JSON, with node positions) →
// interpolate `${env:…}` and `${file:…}` → validate against the schema → check names → resolve units.
// Every problem is collected and reported at once, each with file, line and column; no value is
// ever quoted back.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { redact } from '@toolgate/core';
import { checkNames } from './check-names';
import { ConfigError, type ConfigIssue, type ConfigPath } from './errors';
import { interpolate } from './interpolate';
import { parseText } from './parse';
import type { Problem } from './problem';
import { resolveUnits } from './resolve';
import type { GatewayConfig, ResolvedConfig } from './types';
import { schemaProblems } from './validate';

export interface LoadConfigOptions {
  /** Environment for `${env:…}`; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A loaded configuration and where each of its parts was written. */
export interface LoadedConfig {
  /** As the file wrote it (interpolated): what the audit log records and a reload compares. */
  readonly config: GatewayConfig;
  /** The same, resolved: durations in milliseconds, sizes in bytes, store locations typed. What the gateway runs on. */
  readonly resolved: ResolvedConfig;
  /** The file it came from (absolute), when it came from one. */
  readonly file?: string;
  /** Relative paths in the configuration resolve against this folder. */
  readonly baseDir: string;
  /** An issue placed at `path` in the file (the key itself when `key` is set). */
  issue(path: ConfigPath, message: string, fix?: string, key?: boolean): ConfigIssue;
  /** Values that came from `${env:…}`/`${file:…}`: never to be printed. */
  readonly secrets: readonly string[];
}

/** Shorter interpolated values (a port, `on`) cannot hold a secret, and scrubbing them would garble every message. */
const MIN_SCRUBBED_CHARS = 3;

/** The values worth scrubbing from operator output. */
export function scrubbable(values: readonly string[]): string[] {
  return values.filter((value) => value.length >= MIN_SCRUBBED_CHARS);
}

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
  const document = parseText(text, file);
  // Interpolated values, as they are found: no issue placed from here on (the loader's, an upstream's,
  // a tenant's, the runtime's) can quote one, whatever message it was built from.
  const secrets: string[] = [];
  const scrub = (text: string) => redact(text, scrubbable(secrets));
  const place = (path: ConfigPath, message: string, fix?: string, key = false): ConfigIssue => ({
    path,
    ...(file !== undefined ? { file } : {}),
    ...document.locate(path, key),
    message: scrub(message),
    ...(fix !== undefined ? { fix: scrub(fix) } : {}),
  });

  const issues: ConfigIssue[] = [];
  const env = options.env ?? process.env;
  const value = interpolate(document.raw, [], { env, baseDir, issues, secrets, place });
  if (issues.length > 0) throw new ConfigError(issues);

  const problems: Problem[] = schemaProblems(value);
  const written = value as GatewayConfig;
  let resolved: unknown;
  try {
    problems.push(...checkNames(written));
    const units = resolveUnits(value, baseDir);
    problems.push(...units.problems);
    resolved = units.resolved;
  } catch (error) {
    // A document the schema already refused may not have the shape the later steps walk.
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
  return {
    config: written,
    resolved: resolved as ResolvedConfig,
    ...(file !== undefined ? { file } : {}),
    baseDir,
    issue: place,
    secrets,
  };
}
