// What each runtime runs: the portable suite with the eval-free validator, and with ajv where the
// runtime allows code generation. Where it does not, ajv must fail at dispatcher build, clearly.

import { createDispatcher, defineTool } from '@toolgate/core';
import { ajvValidator, canonicalChain, evalFreeValidator } from '@toolgate/middleware';
import { runPortableSuite, type SuiteReport } from './suite';

export interface RuntimeReport {
  readonly codeGeneration: boolean;
  readonly suites: readonly SuiteReport[];
  /** Where code generation is forbidden: what building a dispatcher with ajv said. */
  readonly ajvRefusal?: string;
}

function codeGenerationAllowed(): boolean {
  try {
    return new Function('return true')() === true;
  } catch {
    return false;
  }
}

function ajvBuildError(): string {
  const tool = defineTool({
    name: 'probe',
    description: 'probe',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    execute: () => 'ran',
  });
  try {
    createDispatcher({ tools: [tool], chain: canonicalChain({ validator: ajvValidator() }) });
    return 'built';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function runEverything(): Promise<RuntimeReport> {
  const codeGeneration = codeGenerationAllowed();
  const suites = [await runPortableSuite('eval-free', evalFreeValidator())];
  if (codeGeneration) suites.push(await runPortableSuite('ajv', ajvValidator()));
  return codeGeneration
    ? { codeGeneration, suites }
    : { codeGeneration, suites, ajvRefusal: ajvBuildError() };
}
