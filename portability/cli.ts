// Entry for runtimes with a command line (Node, Bun, Deno): prints the report as one JSON line.
import { runEverything } from './entry';

console.log(JSON.stringify(await runEverything()));
