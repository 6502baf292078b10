// Shared by the browser tests: Debian's Chromium, located once, launched headless with a fresh
// profile that is removed on close. The launcher is passed in (playwright-core's `chromium`) so that
// this folder needs no browser driver of its own.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env['TOOLGATE_CHROMIUM'] ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `describe` when Chromium is installed, else `describe.skip` with one line saying how to get it. */
export function describeWithChromium(what: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  console.warn(
    `${what} skipped: no Chromium at ${CHROMIUM} (install Debian's 'chromium', or set TOOLGATE_CHROMIUM)`,
  );
  return describe.skip;
}

interface PersistentLauncher<Context> {
  launchPersistentContext(
    profile: string,
    options: {
      executablePath: string;
      headless: boolean;
      args: string[];
      viewport?: { width: number; height: number };
    },
  ): Promise<Context>;
}

export interface OpenBrowser<Context> {
  readonly context: Context;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function openChromium<Context extends { close(): Promise<void> }>(
  launcher: PersistentLauncher<Context>,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<OpenBrowser<Context>> {
  const profile = mkdtempSync(join(tmpdir(), 'toolgate-chromium-'));
  try {
    const context = await launcher.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      ...options,
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
