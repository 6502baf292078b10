// `toolgate check --config F`: validate, connect every upstream, print each tenant's tools with the
// declarations and limits that govern them. Exit 1 on any error; never prints a secret.

import { checkGateway } from '../check-gateway';
import type { LoadedConfig } from '../config/load';
import type { CommandIo } from './io';

export async function checkCommand(loaded: LoadedConfig, io: CommandIo): Promise<number> {
  io.out(await checkGateway(loaded, { env: io.env }));
  return 0;
}
