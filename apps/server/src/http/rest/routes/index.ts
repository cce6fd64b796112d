import type { RestRoute } from '../route';
import { ARTIFACT_ROUTES } from './artifacts';
import { HEALTH_ROUTES } from './health';
import { MESSAGE_ROUTES } from './messages';
import { REGISTRY_ROUTES } from './registry';
import { RUN_ROUTES } from './runs';
import { SCHEDULE_ROUTES } from './schedules';
import { SEARCH_ROUTES } from './search';
import { SESSION_LIFECYCLE_ROUTES } from './session-lifecycle';
import { SESSION_ROUTES } from './sessions';
import { SKILL_ROUTES } from './skills';
import { USAGE_ROUTES } from './usage';

/**
 * The REST compatibility surface: the original Cognition's paths and snake_case shapes, each a
 * thin adapter over one tRPC procedure. The app mounts exactly these, in this order, and the
 * OpenAPI document describes exactly these.
 */
export const REST_ROUTES: RestRoute[] = [
  // First: their literal paths (`/sessions/stats`, `/sessions/{id}/messages/search`, ...) must
  // not be taken for `/sessions/{id}` or `/sessions/{id}/messages/{mid}`.
  ...USAGE_ROUTES,
  ...SEARCH_ROUTES,
  ...SESSION_ROUTES,
  ...MESSAGE_ROUTES,
  ...HEALTH_ROUTES,
  ...RUN_ROUTES,
  ...ARTIFACT_ROUTES,
  ...SESSION_LIFECYCLE_ROUTES,
  ...SKILL_ROUTES,
  ...REGISTRY_ROUTES,
  ...SCHEDULE_ROUTES,
];
