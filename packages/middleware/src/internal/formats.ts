// The string and number formats both validators know, each checked in time linear in the value: the
// same table backs ajv (`formats` option) and the eval-free interpreter, so a format means the same
// thing whichever validator a chain uses. The definitions are ajv-formats' "full" ones; every regex
// among them runs on the linear engine, and the three that use lookarounds (url, duration, hostname)
// are rewritten without them (the same language, checked in two linear steps).

import { fullFormats } from 'ajv-formats/dist/formats.js';
import { compileLinear, type LinearRegExp } from '../linear-regexp';

export type FormatCheck =
  | { readonly type: 'string'; readonly validate: (value: string) => boolean }
  | { readonly type: 'number'; readonly validate: (value: number) => boolean };

/** A linear matcher compiled on first use, so loading the module compiles nothing. */
function linear(source: string): (text: string) => boolean {
  let compiled: LinearRegExp | undefined;
  return (text) => (compiled ??= compileLinear(source)).test(text);
}

// JavaScript's \s, spelled out: the linear engine's \s is ASCII-only.
const SPACE = String.raw`\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`;
const NOT_SPACE = `[^${SPACE}]`;

// url: ajv-formats' pattern with its negative lookaheads (no 10/8, 127/8, 169.254/16, 192.168/16 or
// 172.16/12 addresses) folded into the IP alternative itself.
const O23 = String.raw`(?:1?\d{1,2}|2[0-4]\d|25[0-5])`;
const O4 = String.raw`(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4])`;
const FIRST_PUBLIC = String.raw`(?:[1-9]|1[1-9]|[2-9]\d|1(?:[013-58]\d|2[0-689]|6[0-8]|7[013-9]|9[013-9])|2[01]\d|22[0-3])`;
const IP_HOST = [
  String.raw`${FIRST_PUBLIC}(?:\.${O23}){2}\.${O4}`,
  String.raw`169\.(?:1?\d{1,2}|2[0-4]\d|25[0-35])\.${O23}\.${O4}`,
  String.raw`172\.(?:\d|0\d|1[0-5]|3[2-9]|[4-9]\d|1\d\d|2[0-4]\d|25[0-5])\.${O23}\.${O4}`,
  String.raw`192\.(?:\d{1,2}|1(?:[0-57-9]\d|6[0-79])|2[0-4]\d|25[0-5])\.${O23}\.${O4}`,
].join('|');
const LABEL = String.raw`(?:[a-z0-9\x{00a1}-\x{ffff}]+-)*[a-z0-9\x{00a1}-\x{ffff}]+`;
const DOMAIN_HOST = String.raw`${LABEL}(?:\.${LABEL})*(?:\.(?:[a-z\x{00a1}-\x{ffff}]{2,}))`;
const url = linear(
  String.raw`(?i)^(?:https?|ftp)://(?:${NOT_SPACE}+(?::${NOT_SPACE}*)?@)?(?:${IP_HOST}|${DOMAIN_HOST})(?::\d{2,5})?(?:/${NOT_SPACE}*)?$`,
);

// duration: `P(?!$)` is "not just P"; `T(?=\d)` is "a digit after the T" (a valid value has one T at most).
const durationShape = linear(String.raw`^P((\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$`);
function duration(text: string): boolean {
  const t = text.indexOf('T');
  return text !== 'P' && durationShape(text) && (t === -1 || /^[0-9]$/.test(text.charAt(t + 1)));
}

// hostname: `(?=.{1,253}\.?$)` is a length bound, one more when the name ends with a dot.
const hostnameShape = linear(
  String.raw`(?i)^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\.?$`,
);
function hostname(text: string): boolean {
  const fits = text.length >= 1 && (text.length <= 253 || (text.length === 254 && text.endsWith('.')));
  return fits && hostnameShape(text);
}

// uri: ajv-formats' function (a ':' or '/' somewhere, and its URI pattern), on the linear engine.
const URI = String.raw`(?i)^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$`;
const uriShape = linear(URI);
const uri = (text: string): boolean => (text.includes('/') || text.includes(':')) && uriShape(text);

// byte: ajv-formats tests its base64 pattern line by line (the `m` flag); kept as it is.
const byte = linear(String.raw`(?m)^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`);

const stringCheck = (validate: (value: string) => boolean): FormatCheck => ({ type: 'string', validate });

/** Every ajv-formats "full" format, by name. */
function buildFormats(): Readonly<Record<string, FormatCheck>> {
  const table: Record<string, FormatCheck> = {};
  for (const [name, format] of Object.entries(fullFormats)) {
    if (format instanceof RegExp) {
      table[name] = stringCheck(linear(`${format.flags.includes('i') ? '(?i)' : ''}${format.source}`));
    } else if (format === true) {
      table[name] = stringCheck(() => true);
    } else if (typeof format === 'object' && 'type' in format && format.type === 'number') {
      const validate = format.validate as (value: number) => boolean;
      table[name] = { type: 'number', validate };
    } else if (typeof format === 'object' && typeof format.validate === 'function') {
      // date, time, date-time, iso-time, iso-date-time: anchored patterns with no nested repetition,
      // split on one character, then arithmetic: linear as they are.
      table[name] = stringCheck(format.validate as (value: string) => boolean);
    }
  }
  // regex: ajv-formats' function only parses the pattern (never runs it), which is linear.
  table['regex'] = stringCheck(fullFormats.regex as (value: string) => boolean);
  Object.assign(table, {
    url: stringCheck(url),
    duration: stringCheck(duration),
    hostname: stringCheck(hostname),
    uri: stringCheck(uri),
    byte: stringCheck(byte),
  });
  return Object.freeze(table);
}

let formats: Readonly<Record<string, FormatCheck>> | undefined;

/** The formats both validators accept, by name; any other format name fails at compile. */
export function knownFormats(): Readonly<Record<string, FormatCheck>> {
  return (formats ??= buildFormats());
}
