import type {
  CreateScheduleFields,
  ListSchedulesFilter,
  PatchScheduleFields,
  Run,
  Schedule,
  ScheduleFire,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';

/** A fire of a schedule with the run it started (null: none, given up, or deleted since). */
export interface ScheduleFireWithRun extends ScheduleFire {
  run: Run | null;
}

/**
 * Schedules as the API needs them (the runtime's `ScheduleService` satisfies it). Errors carry
 * a `code`: NOT_FOUND (missing or another tenant's), SESSION_NOT_FOUND (a target session
 * outside the caller's scope), VALIDATION_ERROR with `issues` naming each field.
 */
export interface ScheduleApi {
  create(input: CreateScheduleFields, scope: Scope): Promise<Schedule>;
  list(scope: Scope, filter?: ListSchedulesFilter): Promise<{ items: Schedule[]; total: number }>;
  get(id: string, scope: Scope): Promise<Schedule>;
  patch(id: string, input: PatchScheduleFields, scope: Scope): Promise<Schedule>;
  delete(id: string, scope: Scope): Promise<void>;
  fires(id: string, scope: Scope, limit?: number): Promise<ScheduleFireWithRun[]>;
  trigger(id: string, scope: Scope): Promise<ScheduleFireWithRun>;
}
