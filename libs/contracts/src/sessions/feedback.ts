import { z } from 'zod';
import { IdSchema } from '../common';

export const FEEDBACK_TEXT_MAX = 4000;

/** A rating of one assistant message: 1 (bad) .. 5 (good), with an optional comment. */
export const FeedbackInputSchema = z
  .object({
    score: z.number().int().min(1).max(5),
    text: z.string().max(FEEDBACK_TEXT_MAX).nullable().optional(),
  })
  .strict();
export type FeedbackInput = z.input<typeof FeedbackInputSchema>;

export const MessageFeedbackSchema = z.object({
  score: z.number().int().min(1).max(5),
  text: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type MessageFeedback = z.infer<typeof MessageFeedbackSchema>;

/**
 * One question/answer entry of a session (Cognee's QA entries over our messages): one per
 * completed turn, keyed by the assistant message that answered.
 */
export interface QaEntry {
  qaId: string;
  time: Date;
  question: string;
  answer: string;
  /** The tool results of the turn the answer was built on, in thread order. */
  context: { toolCallId: string | null; content: string }[];
  feedbackScore: number | null;
  feedbackText: string | null;
}

export const QaQuerySchema = z
  .object({ sessionId: IdSchema, lastN: z.number().int().min(1).max(500).default(10) })
  .strict();
