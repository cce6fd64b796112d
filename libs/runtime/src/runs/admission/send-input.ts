import type {
  CallbackConfig,
  ClientTool,
  GraphRunKwargs,
  Message,
  MultitaskStrategy,
  Run,
  Session,
  SessionConfig,
  StringMap,
} from '@cognition/contracts';
import {
  CallbackConfigSchema,
  ClientToolsSchema,
  IdSchema,
  SendMessageFieldsSchema,
  StringMapSchema,
  toFieldIssues,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import type { z } from 'zod';
import { RuntimeError } from '../../errors';

/**
 * Input of `send`: the contract's send fields (`SendMessageFieldsSchema`, so the fields are
 * declared once for every transport), the session, and `scope`, the caller's scope (from auth),
 * never from the request body.
 */
export interface SendInput extends z.input<typeof SendMessageFieldsSchema> {
  sessionId: string;
  scope: Scope;
  /**
   * Tools the client runs itself, offered to the model for this run only: a call of one pauses
   * the run until the client gives its result (`respond`). Stored with the run's input, so a
   * resumed or recovered run offers them again.
   */
  clientTools?: ClientTool[];
  /** How the callback is sent (an A2A push notification config's); needs `callbackUrl`. */
  callbackConfig?: CallbackConfig;
}

/** Input of `sendGraph`: a run of a `langgraph.json` graph, with the kwargs it runs. */
export interface GraphSendInput {
  sessionId: string;
  scope: Scope;
  kwargs: GraphRunKwargs;
  multitaskStrategy?: MultitaskStrategy;
  callbackUrl?: string;
  /** A key already used on the session returns that run (a schedule's firing retried). */
  idempotencyKey?: string;
  /**
   * A delayed run: it is stored `pending` and starts at this time, or later when the session
   * is busy then (its runs not due yet do not hold back other runs).
   */
  startAfter?: Date;
}

export interface SendResult {
  /** The new run: `pending` when it waits behind the session's active run. */
  run: Run;
  /**
   * The user message (for a replayed idempotency key: the first one). For a `pending` run, the
   * message as it enters the history when the run starts, with the id it will have.
   */
  message: Message;
  /** false when the idempotency key matched an earlier run. */
  created: boolean;
}

/**
 * A schedule's `new_session` firing for `RunScheduler.admitFirings`: a send to the session the
 * firing creates (its id derived from the occurrence), admitted with the other firings of a
 * pass in one storage write.
 */
export interface FiringSend {
  scheduleId: string;
  dueAt: Date;
  /** The schedule's tenant: the session's scope. */
  scope: Scope;
  session: { id: string; agentName: string; config: SessionConfig; metadata: StringMap };
  content: string;
  /** The message's metadata. */
  metadata: StringMap;
  callbackUrl: string | null;
  idempotencyKey: string;
  /** Recorded on the fire (`pending`: the session goes once its run ended). */
  cleanup: 'none' | 'pending';
}

/**
 * What became of a firing: admitted (its run and message), refused (an error a send would have
 * thrown: the firing cannot succeed), or null: left out because its session exists already (an
 * earlier attempt), to be sent the ordinary way.
 */
export type FiringOutcome = SendResult | { error: RuntimeError } | null;

/** How a caller inside the runtime sends (never from a request). */
export interface SendOptions {
  /**
   * The session the caller has just created for this send (a schedule's firing): nothing can
   * be in it yet, so admission skips looking for an earlier run of the idempotency key and for
   * runs active or waiting in it. The database still arbitrates the one active run.
   */
  newSession?: Session;
}

/** What `send` accepts, checked before anything is stored: the contract's fields, the session and the caller's scope. */
const SendInputSchema = SendMessageFieldsSchema.extend({
  sessionId: IdSchema,
  scope: StringMapSchema,
  clientTools: ClientToolsSchema.optional(),
  callbackConfig: CallbackConfigSchema.optional(),
});
export type ParsedSend = z.output<typeof SendInputSchema>;

/** The input checked against its schema. @throws RuntimeError VALIDATION_ERROR naming each field. */
export function parseSendInput(input: SendInput): ParsedSend {
  const parsed = SendInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = toFieldIssues(parsed.error);
  throw new RuntimeError(
    'VALIDATION_ERROR',
    `Invalid message: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues },
  );
}
