// What result screening looks for, as a short table of patterns. Every repeat is bounded, so each
// pattern does a fixed amount of work per position and a screen is linear in the text. The rules and
// their false-positive rate on ordinary results are documented in docs/guards.md.

import { screenForms } from './normalize';

/* eslint-disable no-control-regex -- these patterns exist to find control characters */

// Emoji subdivision flags (England, Scotland, Wales) are spelled with tag characters after a black flag.
const FLAG_TAG_SEQUENCE = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,7}\u{E007F}/gu;
const TAG_CHARACTER = /[\u{E0000}-\u{E007F}]/u;

/** Characters that hide or reorder text, and what a finding of each is called. */
export const INVISIBLE_RULES: readonly { readonly id: string; test(text: string): boolean }[] = [
  // Unicode tag characters spell ASCII invisibly ("ASCII smuggling"); a flag emoji's tags are its own.
  {
    id: 'tag-characters',
    test: (text) => TAG_CHARACTER.test(text) && TAG_CHARACTER.test(text.replace(FLAG_TAG_SEQUENCE, '')),
  },
  // Runs of variation selectors encode bytes after a visible character; one after a character is a glyph variant.
  { id: 'variation-selectors', test: (text) => /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2}/u.test(text) },
  // Zero-width runs (binary steganography), invisible operators and fillers, a byte-order mark inside text.
  {
    id: 'zero-width',
    test: (text) =>
      /[\u200B-\u200D\u2060\uFEFF\u00AD]{2}|[\u2061-\u2064\u180E\u115F\u1160\u3164\uFFA0]|(?!^)\uFEFF/.test(
        text,
      ),
  },
  // Embeddings, overrides and isolates reorder what a person sees ("Trojan Source").
  { id: 'bidi-control', test: (text) => /[\u202A-\u202E\u2066-\u2069]/.test(text) },
  // C0 and C1 controls but tab, line feed, carriage return and form feed: ANSI escapes among them.
  { id: 'control-character', test: (text) => /[\u0000-\u0008\u000B\u000E-\u001F\u007F-\u009F]/.test(text) },
];

/** Text addressed to the model rather than to the user. Matched on text with invisible characters removed. */
export const INSTRUCTION_RULES = [
  {
    id: 'override-instruction',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s{1,10}(?:(?:all|any|each|every|the|your|my|these|those|of|previous|prior)\s{1,10}){0,4}(?:previous|prior|above|earlier|preceding|foregoing|former|system|original|initial|developer|safety|existing)\s{1,10}(?:instructions?|prompts?|directions?|directives?|rules|guidelines|guardrails|messages|context|commands?|constraints|policies|restrictions)\b/i,
  },
  {
    id: 'addressed-to-model',
    pattern:
      /\b(?:attention|note|message|instructions?)\s{0,4}(?:to|for)\s{1,10}(?:the\s{1,10}|any\s{1,10}|all\s{1,10})?(?:ai|assistant|llm|language\s{1,4}model|chatbot|claude|gpt|chatgpt)s?\b/i,
  },
  {
    id: 'role-marker',
    pattern:
      /<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\|>|<<\/?SYS>>|\[\/?INST\]|<(?:start|end)_of_turn>|<\/?(?:system|system_prompt|system-prompt)>|^[ \t]{0,8}(?:\[(?:SYSTEM|System|system)\]|(?:#{1,6}[ \t]{0,4}|\*\*)?(?:SYSTEM|System)(?:\*\*)?[ \t]{0,4}:(?:\*\*)?[ \t]{0,4}$)/m,
  },
  {
    id: 'role-marker',
    pattern:
      /^[ \t]{0,8}(?:#{1,6}[ \t]{0,4}|\*\*|\[)?(?:system|assistant|developer)(?:\*\*|\])?[ \t]{0,4}:[ \t]{0,8}(?:you|your|ignore|always|never|do\s{1,4}not|from\s{1,4}now\s{1,4}on)\b/im,
  },
  // Mid-line, after a sentence: "Thanks for reading. SYSTEM: you must now …".
  {
    id: 'role-marker',
    pattern:
      /(?:[.!?;)\]"'>]\s{1,8}|\s{2,}|\t)(?:#{1,6}[ \t]{0,4}|\*\*|\[)?(?:system|assistant|developer)(?:\*\*|\])?[ \t]{0,4}:[ \t]{0,8}(?:you|your|ignore|always|never|do\s{1,4}not|from\s{1,4}now\s{1,4}on|new\s{1,4}instructions?)\b|\[(?:system|assistant|developer)\][ \t]{0,4}:?[ \t]{0,8}(?:you|your|ignore|always|never|do\s{1,4}not)\b/i,
  },
  // "Disregard the above and instead …", "forget everything before this and now …".
  {
    id: 'override-instruction',
    pattern:
      /\b(?:ignore|disregard|forget)\s{1,10}(?:all\s{1,10}(?:of\s{1,10})?)?(?:the\s{1,10}|everything\s{1,10}|what\s{1,10}(?:was\s{1,10})?(?:said|written)\s{1,10})?(?:above|before(?:\s{1,10}this)?|previous(?:ly)?|prior|earlier|foregoing|preceding)(?:\s{1,10}(?:text|content|message|messages|instructions?|context|request|task))?\s{0,4}[,.;:!-]{0,3}\s{0,10}(?:and\s{1,10})?(?:instead|now|from\s{1,4}now\s{1,4}on)\b|\byour\s{1,4}new\s{1,4}(?:instructions?|task|role|goal)\s{1,4}(?:is|are)\b|\bnew\s{1,4}(?:system\s{1,4})?instructions?\s{0,4}:/i,
  },
  // A phrase spelled with its letters spaced out reads with its words run together.
  {
    id: 'override-instruction',
    pattern:
      /(?:ignore|disregard|forget|bypass)(?:all|any|every|the|your|of){0,2}(?:previous|prior|above|earlier|preceding|system|original|developer)(?:instructions?|prompts?|directions?|rules|guidelines|messages|context)/i,
  },
  // Hiding the call from the person who approves it.
  {
    id: 'addressed-to-model',
    pattern:
      /\b(?:do\s{1,4}not|don'?t|never)\s{1,10}(?:tell|inform|mention\s{1,10}(?:this|it)\s{1,10}to|reveal\s{1,10}(?:this|it)\s{1,10}to|notify|alert)\s{1,10}(?:the\s{1,10})?user\b|<\/?important>/i,
  },
  {
    id: 'tool-call',
    pattern:
      /"(?:tool_calls|function_call|tool_use)"\s{0,8}:|"type"\s{0,8}:\s{0,8}"(?:tool_use|tool_call|function_call)"|\{\s{0,8}"(?:name|tool|function)"\s{0,8}:\s{0,8}"[A-Za-z0-9_.:-]{1,128}"\s{0,8},\s{0,8}"(?:arguments|parameters|input|args)"\s{0,8}:|<(?:function_calls|tool_call|tool_use)\b|<invoke\s{1,8}name=/,
  },
] as const;

/** Everything the screen could find, and the way most results are cleared at once. */
const ANY_INVISIBLE =
  /[\u{E0000}-\u{E007F}\u2061-\u2064\u180E\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069\u0000-\u0008\u000B\u000E-\u001F\u007F-\u009F]|[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2}|[\u200B-\u200D\u2060\uFEFF\u00AD]{2}|(?!^)\uFEFF/u;
const CONTROL_ESCAPE = /\\u00(?:[01][0-9a-fA-F]|7[fF]|[89][0-9a-fA-F])/;
const MAYBE_INSTRUCTION =
  /ignore|disregard|forget|override|bypass|attention|note|message|instruction|system|assistant|developer|instead|user|important|erongi|dragersid|tegrof|metsys|tnatsissa|<\||<<\/?SYS|INST\]|_of_turn>|"tool_calls"|"function_call"|"tool_use"|"type"|"(?:name|tool|function)"|<function_calls|<tool_call|<tool_use|<invoke/i;

// What can hide a word from MAYBE_INSTRUCTION: any character outside ASCII (joiners, compatibility
// forms, look-alike letters of other scripts), an HTML entity, letters spelled out one by one, or a
// base64 or hex run, or a keyword written backwards; such text is normalized before it is matched.
const DISGUISED =
  /[^\u0000-\u007F]|&#?[A-Za-z0-9]{2,8};?|(?:[A-Za-z][ ._*|~-]){3}[A-Za-z]|erongi|dragersid|tegrof|metsys|tnatsissa|snoitcurtsni|[A-Za-z0-9+/_-]{24}|(?:[0-9a-fA-F]{2}){12}/i;

/** Whether `text` (a result's text as the model reads it) could hold anything the screen finds. */
export function mayHoldFindings(text: string, json: boolean): boolean {
  return (
    ANY_INVISIBLE.test(text) ||
    (json && CONTROL_ESCAPE.test(text)) ||
    MAYBE_INSTRUCTION.test(text) ||
    DISGUISED.test(text)
  );
}

/** Adds to `found` the id of every rule `text` trips, in the text as it is and in every normalized form. */
export function screen(text: string, found: Set<string>): void {
  if (ANY_INVISIBLE.test(text))
    for (const rule of INVISIBLE_RULES) if (!found.has(rule.id) && rule.test(text)) found.add(rule.id);
  const forms = DISGUISED.test(text) ? [text, ...screenForms(text)] : [text];
  for (const rule of INSTRUCTION_RULES) {
    if (found.has(rule.id)) continue;
    for (const form of forms)
      if (rule.pattern.test(form)) {
        found.add(rule.id);
        break;
      }
  }
}

export const INVISIBLE_IDS: ReadonlySet<string> = new Set(INVISIBLE_RULES.map((rule) => rule.id));

const ANSI_SEQUENCE =
  /\u001B\[[0-?]{0,32}[ -/]{0,8}[@-~]|\u001B\][^\u0007\u001B]{0,4096}(?:\u0007|\u001B\\)?/g;
const STRIPPED =
  /(\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,7}\u{E007F})|[\u{E0000}-\u{E007F}\u2061-\u2064\u180E\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069\u0000-\u0008\u000B\u000E-\u001F\u007F-\u009F]|[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2,4096}|[\u200B-\u200D\u2060\uFEFF\u00AD]{2,4096}|(?!^)\uFEFF/gu;

/** `text` without what the invisible rules find: ANSI escape sequences go whole. */
export function stripInvisible(text: string): string {
  // A subdivision flag's tags are kept: they are the flag.
  return text.replace(ANSI_SEQUENCE, '').replace(STRIPPED, (_, flag: string | undefined) => flag ?? '');
}
