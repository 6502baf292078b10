// Entry for workerd: the suite runs inside a request, where a worker may use timers and crypto.
import { runEverything } from './entry';

export default {
  async fetch(): Promise<Response> {
    return new Response(JSON.stringify(await runEverything()), {
      headers: { 'content-type': 'application/json' },
    });
  },
};
