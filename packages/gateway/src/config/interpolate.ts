// Step two of loading: `${env:NAME}` and `${file:PATH}` replaced by their values (each remembered as a
// secret), `${credential:NAME}` left for connect time in an upstream's headers and env, `$${` a literal.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConfigIssue, ConfigPath } from './errors';

const INTERPOLATION = /\$\$\{|\$\{([^}]*)\}/g;
const CREDENTIAL_HOMES = new Set(['headers', 'env']);

export interface InterpolationContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly baseDir: string;
  readonly issues: ConfigIssue[];
  readonly secrets: string[];
  readonly place: (path: ConfigPath, message: string, fix?: string) => ConfigIssue;
}

/** `value` with every string interpolated; a string that fails stays as written, its issue pushed. */
export function interpolate(
  value: unknown,
  path: (string | number)[],
  context: InterpolationContext,
): unknown {
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
