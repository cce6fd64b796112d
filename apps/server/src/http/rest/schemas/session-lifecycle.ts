import {
  IdSchema,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  StringMapSchema,
} from '@cognition/contracts';
import { z } from 'zod';
import { queryInt, Timestamp } from './common';
import { TitleSchema } from './sessions';

/* The wire shapes of the session lifecycle routes (routes/session-lifecycle.ts). */

const ExpectedVersionBody = z.number().int().min(1).optional().meta({
  description: 'The action happens only if the session is still at this version (409 otherwise)',
});

/** suspend, resume, complete, clear (the body is optional). */
export const SessionActionBody = z
  .object({ expected_version: ExpectedVersionBody })
  .strict()
  .meta({ id: 'SessionActionRequest' });

export const FailSessionBody = z
  .object({
    reason: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .meta({ description: 'Kept in the activity log' }),
    expected_version: ExpectedVersionBody,
  })
  .strict()
  .meta({ id: 'FailSessionRequest' });

export const ForkSessionBody = z
  .object({
    title: TitleSchema.optional().meta({ description: "Default: the source's title" }),
    checkpoint_id: IdSchema.optional().meta({ description: 'Fork from this checkpoint' }),
    message_id: IdSchema.optional().meta({
      description: 'Fork from the state right after this message',
    }),
  })
  .strict()
  .meta({ id: 'ForkSessionRequest', description: 'Latest state when neither id is given.' });

export const RewindSessionBody = z
  .object({
    checkpoint_id: IdSchema.optional(),
    message_id: IdSchema.optional(),
    expected_version: ExpectedVersionBody,
  })
  .strict()
  .meta({
    id: 'RewindSessionRequest',
    description: 'Exactly one of checkpoint_id and message_id.',
  });

export const MetadataValueBody = z
  .object({ value: StringMapSchema.valueType, expected_version: ExpectedVersionBody })
  .strict()
  .meta({ id: 'MetadataValueRequest' });

export const MetadataKeyParams = z.object({
  id: IdSchema.meta({ description: 'Session id' }),
  key: StringMapSchema.keyType.meta({ description: 'Metadata key' }),
});

export const PageQuery = z
  .object({
    limit: queryInt(1, PAGE_LIMIT_MAX, `Page size (default ${PAGE_LIMIT_DEFAULT})`).optional(),
    offset: queryInt(0, 1_000_000_000, 'Entries to skip (default 0)').optional(),
  })
  .strict();

const CheckpointBody = z
  .object({
    checkpoint_id: z.string(),
    parent_checkpoint_id: z.string().nullable(),
    step: z.number().int(),
    created_at: Timestamp,
    message_count: z.number().int().min(0),
    last_message_preview: z.string().nullable(),
  })
  .meta({ id: 'Checkpoint' });

export const HistoryBody = z
  .object({ checkpoints: z.array(CheckpointBody), has_more: z.boolean() })
  .meta({ id: 'SessionHistory', description: "The thread's checkpoints, newest first." });

const ActivityEntryBody = z
  .object({
    id: z.number().int().min(1),
    session_id: IdSchema,
    type: z.string().meta({
      description:
        'session.loaded | session.action_executed | session.saved | session.load_failed | session.save_failed',
    }),
    action: z.string().nullable(),
    version_before: z.number().int().nullable(),
    version_after: z.number().int().nullable(),
    status_before: z.string().nullable(),
    status_after: z.string().nullable(),
    error_code: z.string().nullable(),
    detail: StringMapSchema,
    created_at: Timestamp,
  })
  .meta({ id: 'SessionActivity' });

export const ActivityListBody = z
  .object({
    entries: z.array(ActivityEntryBody),
    total: z.number().int().min(0),
    has_more: z.boolean(),
  })
  .meta({ id: 'SessionActivityList', description: 'Newest first.' });

export const RebuildBody = z
  .object({
    messages: z.number().int().min(0).meta({ description: 'Message rows after the rebuild' }),
  })
  .meta({ id: 'RebuildResult' });
