// Where each upstream resolves a relative path, for the path guard: a stdio server resolves it from
// its working directory, which the gateway chose; an HTTP server's is unknown unless the operator
// writes it (`upstreams.NAME.paths.base`). Symbolic links are resolved only for stdio servers: they
// run on this host and see the file system the gateway sees.

import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Tool } from '@toolgate/core';
import type { AnyConfig } from './config/types';

export interface PathBases {
  /** The directory the tool's upstream opens relative paths from; undefined when unknown. */
  base(tool: Tool): string | undefined;
  /** The real path of an approved path, resolved where the upstream sees the file system. */
  realpath(path: string, tool: Tool): Promise<string>;
}

/** The directory a stdio upstream is started in. */
export function stdioWorkingDirectory(baseDir: string, cwd: string | undefined): string {
  return resolve(baseDir, cwd ?? '.');
}

/**
 * The real path of `path` with every symbolic link resolved; a tail that does not exist yet (a file
 * about to be written) is kept as written under its nearest existing directory's real path.
 */
export async function realPathOf(path: string): Promise<string> {
  let existing = path;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = await realpath(existing);
      return tail.length === 0 ? real : join(real, ...tail.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = dirname(existing);
      // Only a missing entry is walked up; anything else (a loop, no permission) refuses the call.
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === existing) throw error;
      tail.push(basename(existing));
      existing = parent;
    }
  }
}

/** `sourceOf` maps a local tool name to its upstream's name. */
export function pathBases(
  config: AnyConfig,
  baseDir: string,
  sourceOf: ReadonlyMap<string, string>,
): PathBases {
  const upstreamOf = (tool: Tool) => {
    const name = sourceOf.get(tool.schema.name);
    return name === undefined ? undefined : config.upstreams[name];
  };
  return {
    base(tool) {
      const upstream = upstreamOf(tool);
      if (upstream === undefined) return undefined;
      const written = upstream.paths?.base;
      if (written !== undefined) return isAbsolute(written) ? written : undefined;
      return upstream.command !== undefined ? stdioWorkingDirectory(baseDir, upstream.cwd) : undefined;
    },
    async realpath(path, tool) {
      return upstreamOf(tool)?.command !== undefined ? realPathOf(path) : path;
    },
  };
}
