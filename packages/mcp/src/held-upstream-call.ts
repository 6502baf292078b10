// A 2025-era upstream (revision 2025-11-25) asks its client mid-call with a server-to-client request
// and waits for the answer on the same tools/call. A 2026-07-28 caller holds no channel for such a
// request: it is answered `input_required` and retries. So the upstream's call is held open here
// across the caller's rounds: each round waits for the upstream's next question or its result; a
// question ends the round (the call is parked, see parked-calls.ts) and the retry answers it.

import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Identity } from '@toolgate/core';
import type { ParkedCall } from './parked-calls';

/** The server-to-client requests a held call relays. */
export type QuestionMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

/** The upstream's one question waiting for an answer. */
export interface HeldQuestion {
  readonly method: QuestionMethod;
  readonly params: unknown;
  /** Aborted when the upstream withdraws its request (it gave up waiting, or its call ended). */
  readonly withdrawn: AbortSignal;
  /** Sends the upstream the client's answer. */
  answer(result: Record<string, unknown>): void;
  /** Answers it as a question nobody can answer: decline, or the error the server reads today. */
  unanswered(): void;
}

/** What a round ended with: the upstream's result, or its next question. */
export type HeldStep =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'question'; readonly question: HeldQuestion };

/** One upstream tools/call held open across the rounds of a 2026-07-28 caller. */
export class HeldUpstreamCall<Round = unknown> implements ParkedCall {
  readonly upstream: string;
  readonly identity: Identity | undefined;
  /** The id it is parked under now, if parked. */
  parkedAs: string | undefined;
  readonly #controller = new AbortController();
  #outcome: Promise<CallToolResult> | undefined;
  #question: HeldQuestion | undefined;
  // The question not yet handed to the round (it came before the round waited).
  #undelivered = false;
  #waiter: ((step: HeldStep) => void) | undefined;
  #inRound = false;
  #ended = false;
  #touch: (() => void) | undefined;
  readonly #onEnd: () => void;
  /** The round running now (its downstream side), absent while parked: where logs and progress go. */
  round: Round | undefined;

  constructor(
    facts: { readonly upstream: string; readonly identity: Identity | undefined },
    onEnd: () => void,
  ) {
    this.upstream = facts.upstream;
    this.identity = facts.identity;
    this.#onEnd = onEnd;
  }

  /** Aborted when the upstream call is cancelled. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether it waits for a retry (no round is running). */
  get parked(): boolean {
    return !this.#inRound && !this.#ended;
  }

  /** Sends the upstream tools/call; the first round begins. */
  start(call: (signal: AbortSignal) => Promise<CallToolResult>, round: Round): void {
    this.#inRound = true;
    this.round = round;
    const outcome = call(this.#controller.signal);
    // Read by the round that waits; a held call nobody waits on must not leave it unhandled.
    outcome.catch(() => undefined);
    this.#outcome = outcome;
  }

  /** A round begins again (a retry took the parked call). */
  resume(round: Round): void {
    this.#inRound = true;
    this.round = round;
  }

  /** The round ends with the upstream's question pending: it waits for a retry. */
  park(): void {
    this.#inRound = false;
    this.round = undefined;
  }

  /** The upstream's question pending now, if any. */
  get question(): HeldQuestion | undefined {
    return this.#question;
  }

  /** Progress came from the upstream: the round's time to answer starts again. */
  touch(): void {
    this.#touch?.();
  }

  /**
   * The upstream asks during a round: the answer the retry will give, or undefined when it cannot be
   * taken (parked, ended, or a question already pending), to be answered as today.
   */
  ask(
    method: QuestionMethod,
    params: unknown,
    signal: AbortSignal,
    unanswered: (settle: { resolve(value: unknown): void; reject(error: unknown): void }) => void,
  ): Promise<unknown> | undefined {
    if (!this.#inRound || this.#ended || this.#question !== undefined) return undefined;
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = { resolve, reject };
      const done = () => {
        settled = true;
        if (this.#question === question) this.#question = undefined;
        signal.removeEventListener('abort', withdrawn);
      };
      const question: HeldQuestion = {
        method,
        params,
        withdrawn: signal,
        answer: (result) => {
          if (settled) return;
          done();
          resolve(result);
        },
        unanswered: () => {
          if (settled) return;
          done();
          unanswered(settle);
        },
      };
      // The upstream withdrew its request (it gave up waiting): nothing is sent back.
      const withdrawn = () => {
        if (settled) return;
        done();
        reject(signal.reason);
      };
      signal.addEventListener('abort', withdrawn, { once: true });
      this.#question = question;
      this.#undelivered = true;
      this.#deliver();
    });
  }

  #deliver(): void {
    const waiter = this.#waiter;
    if (waiter === undefined || !this.#undelivered || this.#question === undefined) return;
    this.#undelivered = false;
    this.#waiter = undefined;
    waiter({ kind: 'question', question: this.#question });
  }

  /**
   * Waits for the upstream's result or next question, at most `timeoutMs` without progress. A cancel
   * of the round (`signal`), a timeout or a failed upstream call ends the held call and rejects.
   */
  async next(timeoutMs: number, signal: AbortSignal, timedOut: () => Error): Promise<HeldStep> {
    const outcome = this.#outcome;
    if (outcome === undefined || this.#ended) throw new Error('the held call has ended');
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await new Promise<HeldStep>((resolve, reject) => {
        const fail = (error: unknown) => {
          this.end();
          reject(error);
        };
        this.#touch = () => {
          clearTimeout(timer);
          timer = setTimeout(() => fail(timedOut()), timeoutMs);
        };
        this.#touch();
        onAbort = () => fail(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        outcome.then((result) => resolve({ kind: 'result', result }), fail);
        this.#waiter = resolve;
        this.#deliver();
      });
    } finally {
      clearTimeout(timer);
      this.#touch = undefined;
      this.#waiter = undefined;
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    }
  }

  /** The upstream's call ended with a result: forgets it. */
  finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#inRound = false;
    this.round = undefined;
    this.#onEnd();
  }

  /**
   * Ends it unfinished: a pending question is answered as an unanswered one and the upstream's call
   * cancelled. Idempotent.
   */
  end(): void {
    if (this.#ended) return;
    const question = this.#question;
    this.finish();
    // The cancel goes first: the upstream must not take the answer below for a reason to carry on.
    this.#controller.abort(new Error('the held upstream call was ended'));
    question?.unanswered();
  }
}
