// Node 22 flags node:sqlite (the SQLite store) experimental once per process, on stderr. Every
// supported Node line runs the store's tests, and the line on every `toolgate` command's stderr would
// only alarm an operator, so the bin drops that one warning; every other warning still prints.

/** Installs the filter on `process.emitWarning`, through which Node emits its experimental warnings. */
export function quietSqliteWarning(): void {
  const emit = process.emitWarning.bind(process) as (warning: string | Error, ...rest: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const first = rest[0];
    const type = typeof first === 'string' ? first : (first as { type?: unknown } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && text.startsWith('SQLite ')) return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
