// Durations (`15m`, `30s`) and sizes (`5mb`) as the configuration writes them. Each parser answers
// a number or a sentence saying what is accepted; the loader resolves each once (config/resolve.ts).

const DURATION_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
};

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)$/i;

export const DURATION_HELP = "a duration such as '500ms', '30s', '15m', '2h' or '1d'";
export const SIZE_HELP = "a size such as '512b', '64kb', '5mb' or '1gb' (or a number of bytes)";

/** Milliseconds, or a string explaining what a duration looks like. */
export function parseDuration(value: unknown): number | string {
  if (typeof value !== 'string') return `expected ${DURATION_HELP}`;
  const match = DURATION.exec(value.trim());
  if (match === null) return `expected ${DURATION_HELP}`;
  const ms = Number(match[1]) * DURATION_UNITS[match[2]!]!;
  if (!Number.isFinite(ms) || ms <= 0 || !Number.isSafeInteger(Math.round(ms)))
    return `expected a positive ${DURATION_HELP.slice(2)}`;
  return Math.round(ms);
}

/** Bytes, or a string explaining what a size looks like. */
export function parseSize(value: unknown): number | string {
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && value > 0 ? value : `expected ${SIZE_HELP}`;
  if (typeof value !== 'string') return `expected ${SIZE_HELP}`;
  const match = SIZE.exec(value.trim());
  if (match === null) return `expected ${SIZE_HELP}`;
  const bytes = Math.floor(Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]!);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : `expected a positive ${SIZE_HELP.slice(2)}`;
}
