// Description screening: a tool's description is read by the model before any call, so a server
// that writes instructions there ("tool poisoning") reaches the model without a result. Descriptions
// are screened like results, through the same normalization, at list time: one tool's, and all of a
// server's together, so a phrase spread over several tools is read whole.

import { screen } from './internal/screen-rules';

// A description that sends the model to where credentials or client configuration live.
const SENSITIVE_FILE =
  /(?:~|\$home|%userprofile%)[/\\](?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.config[/\\]gcloud)\b|\bid_(?:rsa|ed25519|ecdsa)\b|\.aws[/\\]credentials\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\/etc\/(?:passwd|shadow)\b/i;

/** What a description can be refused for; tool-call-shaped JSON is an ordinary example there. */
export const DESCRIPTION_FINDING_IDS: readonly string[] = Object.freeze([
  'override-instruction',
  'addressed-to-model',
  'role-marker',
  'sensitive-file',
]);

const WORDS: Record<string, string> = {
  'override-instruction': 'an instruction to ignore earlier instructions',
  'addressed-to-model': 'text addressed to the AI assistant (or asking it to keep something from the user)',
  'role-marker': 'chat role markers',
  'sensitive-file': 'a path where keys or client configuration are kept',
};

/** The findings in `text` (a tool's name, title and description), in DESCRIPTION_FINDING_IDS order. */
export function descriptionFindings(text: string): string[] {
  const found = new Set<string>();
  screen(text, found);
  if (SENSITIVE_FILE.test(text)) found.add('sensitive-file');
  return DESCRIPTION_FINDING_IDS.filter((id) => found.has(id));
}

/** Why a tool is not listed, for `toolgate check`, /readyz and the audit log. */
export function descriptionProblem(ids: readonly string[], together = false): string {
  const words = ids.map((id) => WORDS[id] ?? id).join(' and ');
  return together
    ? `read together with the other tools' descriptions of its server, its description contains ${words}`
    : `its description contains ${words}, which a tool's description may not address to the model`;
}

/** Why a server's instructions are not passed on, for the event, the log and the audit log. */
export function instructionsProblem(ids: readonly string[]): string {
  return `its instructions contain ${ids.map((id) => WORDS[id] ?? id).join(' and ')}, which instructions passed on to the model may not`;
}

/**
 * Screens the descriptions of one server's tools, each alone and all together (in listing order);
 * answers the tools that may not be listed, by name, with why.
 */
export function screenDescriptions(
  tools: readonly { readonly name: string; readonly text: string }[],
): Map<string, string> {
  const refused = new Map<string, string>();
  for (const tool of tools) {
    const ids = descriptionFindings(tool.text);
    if (ids.length > 0) refused.set(tool.name, descriptionProblem(ids));
  }
  const rest = tools.filter((tool) => !refused.has(tool.name));
  if (rest.length < 2) return refused;
  const together = descriptionFindings(rest.map((tool) => tool.text).join('\n'));
  if (together.length === 0) return refused;
  // A phrase spread over several tools cannot be pinned on one: none of the server's tools is listed.
  for (const tool of rest) refused.set(tool.name, descriptionProblem(together, true));
  return refused;
}
