// The configuration file's watcher: a change to the file (written in place, or a new file renamed
// over it, as editors save) asks for one reload after the writes settle.

import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface ConfigWatcher {
  close(): void;
}

/** Calls `changed` once `file` has stopped changing for `settleMs`; undefined when the folder cannot be watched. */
export function watchConfigFile(
  file: string,
  changed: () => void,
  settleMs: number,
): ConfigWatcher | undefined {
  const name = basename(file);
  let timer: NodeJS.Timeout | undefined;
  try {
    // The folder, not the file: a file renamed over the old one is a new file the old watch misses.
    const watcher = watch(dirname(file), (_event, touched) => {
      if (touched !== null && touched.toString() !== name) return;
      clearTimeout(timer);
      timer = setTimeout(changed, settleMs);
      timer.unref?.();
    });
    watcher.on('error', () => undefined);
    watcher.unref();
    return {
      close() {
        clearTimeout(timer);
        watcher.close();
      },
    };
  } catch {
    return undefined;
  }
}
